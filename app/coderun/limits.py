"""What one code run may use, each bounded by the server's maximum (``PODIUM_CODE_MAX_*``)."""

from pydantic import BaseModel, ConfigDict, Field

from app.config import Settings


class CodeLimits(BaseModel):
    """A phase's ``code_limits``: the run's wall clock, its memory (every process of the run
    together where a memory control group holds it, else each process's address space), its CPUs
    and its writable ``/kaggle/working``, which lives in memory and is capped by the kernel."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    wall_seconds: float = Field(default=600.0, gt=0)
    memory_mb: int = Field(default=2048, ge=64)
    cpus: float = Field(default=1.0, gt=0)
    working_mb: int = Field(default=1024, ge=1)


def maxima(settings: Settings) -> CodeLimits:
    """The server's ceiling on every limit."""
    return CodeLimits(
        wall_seconds=settings.code_max_wall_seconds,
        memory_mb=settings.code_max_memory_mb,
        cpus=settings.code_max_cpus,
        working_mb=settings.code_max_working_mb,
    )


_SETTING = {
    "wall_seconds": "PODIUM_CODE_MAX_WALL_SECONDS",
    "memory_mb": "PODIUM_CODE_MAX_MEMORY_MB",
    "cpus": "PODIUM_CODE_MAX_CPUS",
    "working_mb": "PODIUM_CODE_MAX_WORKING_MB",
}


def beyond(limits: CodeLimits, ceiling: CodeLimits) -> list[str]:
    """One sentence per limit above the server's ceiling (empty: all within); a host's request
    past it is a 422 with these, never silently lowered."""
    return [
        f"code_limits.{name} is {_number(getattr(limits, name))}; this server allows at most "
        f"{_number(getattr(ceiling, name))} ({setting})"
        for name, setting in _SETTING.items()
        if getattr(limits, name) > getattr(ceiling, name)
    ]


def _number(value: float) -> str:
    """A limit as a host typed it: 99999999, not 1e+08; 0.5 stays 0.5."""
    return f"{int(value)}" if float(value).is_integer() else f"{value:g}"
