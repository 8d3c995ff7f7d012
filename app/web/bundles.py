"""The host page "Import a bundle" (``/host/import``): an EvalAI, Codabench or CodaLab bundle
made into a draft competition, with the same report as ``POST /api/v1/competitions/import``
(phases, columns, warnings). No JavaScript: a form with a file, a slug and a dry-run box."""

from fastapi import APIRouter, Request, Response
from fastapi.responses import HTMLResponse
from starlette.datastructures import UploadFile

from app.competitions import bundles
from app.competitions.schemas import CompetitionImported
from app.deps import SessionDep, SettingsDep
from app.errors import AppError, Unprocessable
from app.web.launch import WHO_MAY_HOST
from app.web.session import CsrfChecked, HostsOnly, SignedInUser
from app.web.templating import render

router = APIRouter(include_in_schema=False)


def _page(
    request: Request,
    *,
    slug: str = "",
    dry_run: bool = False,
    start_now: bool = False,
    error: AppError | None = None,
    report: CompetitionImported | None = None,
    status_code: int = 200,
) -> Response:
    return render(
        request,
        "import_bundle.html",
        {
            "slug": slug,
            "dry_run": dry_run,
            "start_now": start_now,
            "error": error,
            "report": report,
        },
        status_code=status_code,
    )


@router.get("/host/import", response_class=HTMLResponse)
def import_page(request: Request, user: SignedInUser) -> Response:
    if not user.is_organiser:
        raise HostsOnly(WHO_MAY_HOST)
    return _page(request)


@router.post("/host/import", dependencies=[CsrfChecked])
async def import_form(
    request: Request, session: SessionDep, settings: SettingsDep, user: SignedInUser
) -> Response:
    if not user.is_organiser:
        raise HostsOnly(WHO_MAY_HOST)
    form = await request.form()
    slug = str(form.get("slug") or "").strip()[:64]
    dry_run = bool(form.get("dry_run"))
    start_now = bool(form.get("start_now"))
    upload = form.get("file")
    if not isinstance(upload, UploadFile) or not upload.filename:
        error: AppError = Unprocessable("choose a bundle (a .zip file) to import")
        return _page(
            request, slug=slug, dry_run=dry_run, start_now=start_now, error=error, status_code=422
        )
    try:
        report = bundles.import_bundle(
            session,
            bundle=bundles.read_upload(upload.file, max_bytes=settings.bundle_max_bytes),
            name=upload.filename[:200],
            owner=user,
            settings=settings,
            slug=slug or None,
            dry_run=dry_run,
            start_now=start_now,
        )
    except AppError as exc:
        # Nothing was kept: the import rolled its own savepoint back.
        return _page(
            request,
            slug=slug,
            dry_run=dry_run,
            start_now=start_now,
            error=exc,
            status_code=exc.status_code,
        )
    return _page(
        request, slug=slug, dry_run=dry_run, start_now=start_now, report=report, status_code=201
    )
