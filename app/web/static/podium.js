// Podium's page script: countdowns, the header check and progress bar of the upload form, and
// the self-updating status of My submissions. Every page works without it.
"use strict";

function untilText(ms) {
  if (ms <= 0) return "now";
  const s = Math.floor(ms / 1000), d = Math.floor(s / 86400), h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60), r = s % 60;
  if (d) return d + "d " + h + "h";
  if (h) return h + "h " + m + "m";
  return m ? m + "m " + r + "s" : r + "s";
}

function tickCountdowns() {
  document.querySelectorAll("time.countdown").forEach((el) => {
    const target = Date.parse(el.getAttribute("datetime"));
    if (isNaN(target)) return;
    el.textContent = el.textContent.replace(/in .*|now$/, "in " + untilText(target - Date.now()))
      .replace("in now", "now");
  });
}

async function firstLine(file) {
  const head = file.slice(0, 1 << 16);
  let text;
  if (/\.gz$/i.test(file.name) && "DecompressionStream" in window) {
    try {
      const stream = head.stream().pipeThrough(new DecompressionStream("gzip"));
      const reader = stream.getReader();
      const { value } = await reader.read();
      reader.cancel().catch(() => {});
      text = new TextDecoder().decode(value || new Uint8Array());
    } catch (e) { return null; }  // a truncated gzip: leave the check to the server
  } else if (/\.zip$/i.test(file.name)) {
    return null;
  } else {
    text = await head.text();
  }
  return text.replace(/^\ufeff/, "").split(/\r?\n/, 1)[0];
}

function headerProblem(line, expected) {
  const got = line.split(",").map((c) => c.replace(/^"|"$/g, ""));
  const missing = expected.filter((c) => !got.includes(c));
  const extra = got.filter((c) => !expected.includes(c));
  if (!missing.length && !extra.length) return null;
  const parts = [];
  if (missing.length) parts.push("missing column(s) " + missing.join(", "));
  if (extra.length) parts.push("unexpected column(s) " + extra.slice(0, 5).join(", "));
  return "This file's header does not match: " + parts.join("; ") + ". Expected " + expected.join(", ") + ".";
}

function setupUpload() {
  const form = document.getElementById("upload");
  if (!form || !window.XMLHttpRequest) return;
  const result = form.querySelector(".check-result");
  const bar = form.querySelector("progress");
  const button = form.querySelector("button[type=submit]");
  const expected = (form.dataset.columns || "").split(",").filter(Boolean);
  const say = (text, bad) => { result.hidden = !text; result.textContent = text || ""; result.className = "check-result " + (bad ? "flash error" : "flash ok"); };
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const file = form.elements.file.files[0];
    if (!file) return;
    if (expected.length) {
      const line = await firstLine(file);
      const problem = line === null ? null : headerProblem(line, expected);
      if (problem) { say(problem, true); return; }
    }
    say("", false);
    const xhr = new XMLHttpRequest();
    xhr.open("POST", form.action);
    xhr.setRequestHeader("Accept", "application/json");
    bar.hidden = false; bar.value = 0; button.disabled = true;
    xhr.upload.onprogress = (e) => { if (e.lengthComputable) bar.value = (100 * e.loaded) / e.total; };
    xhr.onload = () => {
      button.disabled = false; bar.hidden = true;
      let body = {};
      try { body = JSON.parse(xhr.responseText); } catch (e) { /* not JSON */ }
      if (xhr.status === 202) {
        say("Submission " + body.id + " is uploaded; its status follows in the list.", false);
        form.reset();
        refreshSubmissions();
      } else {
        say(body.detail || ("Upload failed (HTTP " + xhr.status + ")"), true);
      }
    };
    xhr.onerror = () => { button.disabled = false; bar.hidden = true; say("The upload was interrupted; try again.", true); };
    xhr.send(new FormData(form));
  });
}

function fmtScore(value, digits) {
  // digits null: every digit (a host's view), as the server writes it.
  if (value === null || value === undefined) return "—";
  return digits === null || digits === undefined ? String(Number(Number(value).toPrecision(6))) : Number(value).toFixed(digits);
}

function cell(tag, cls, text) {
  const el = document.createElement(tag);
  if (cls) el.className = cls;
  if (text !== undefined) el.textContent = text;
  return el;
}

function fmtWhen(iso) {
  const d = new Date(iso);
  return d.toISOString().slice(0, 16).replace("T", " ") + " UTC";
}

function scoreValue(s, col, first, which) {
  // Each column's value; a Ladder view (no columns) holds the ranking column's in public_score.
  if (s.scores && Object.keys(s.scores).length) return (s.scores[col.key] || {})[which];
  if (!first) return null;
  return which === "public" ? s.public_score : s.private_score;
}

function renderHead(table, columns, revealed, selectable) {
  const one = columns.length === 1;
  const head = table.tHead.rows[0];
  head.replaceChildren(cell("th", "num", "#"), cell("th", "hide-narrow", "Submitted"),
    cell("th", "hide-narrow", "Description"), cell("th", "", "Status"));
  for (const col of columns) head.append(cell("th", "num", one ? "Public" : col.title));
  if (revealed) for (const col of columns) head.append(cell("th", "num", one ? "Private" : col.title + " private"));
  if (selectable) head.append(cell("th", "", "Final"));
}

function renderRows(table, rows) {
  const slug = table.dataset.slug, csrf = table.dataset.csrf;
  const columns = JSON.parse(table.dataset.scoreColumns || "[]");
  const selectable = table.dataset.selectable === "true";
  const revealed = rows.some((r) => "private_score" in r);
  renderHead(table, columns, revealed, selectable);
  const body = table.tBodies[0];
  body.replaceChildren();
  if (!rows.length) { const tr = body.insertRow(); tr.className = "empty"; const td = cell("td", "muted", "No submissions yet."); td.colSpan = 6 + columns.length; tr.append(td); return; }
  for (const s of rows) {
    const tr = body.insertRow();
    tr.dataset.id = s.id; tr.dataset.status = s.status;
    tr.append(cell("td", "num", String(s.id)), cell("td", "nowrap hide-narrow", fmtWhen(s.created_at)));
    const desc = cell("td", "hide-narrow", s.description || "");
    if (s.late) desc.append(" ", cell("span", "badge late", "late"));
    tr.append(desc);
    const status = cell("td", "status");
    status.append(cell("span", "badge " + s.status, s.status));
    if (table.dataset.code === "true") {
      // A code submission's run: its page has the log (the team's and the hosts' only).
      const a = cell("a", "small run-link", s.failure ? "log" : "run");
      a.href = "/c/" + slug + "/submissions/" + s.id;
      status.append(" ", a);
    }
    if (s.error) status.append(cell("div", "error-text", s.error));
    tr.append(status);
    for (const which of revealed ? ["public", "private"] : ["public"]) {
      columns.forEach((col, i) => {
        const first = i === 0;
        tr.append(cell("td", first && which === "public" ? "num public" : "num", fmtScore(scoreValue(s, col, first, which), col.digits)));
      });
    }
    if (!selectable) continue;
    const sel = cell("td", "select");
    if (s.status === "scored" && !s.late) {
      const f = document.createElement("form");
      f.method = "post"; f.className = "inline"; f.action = "/c/" + slug + "/submissions/" + s.id + "/select";
      for (const [name, value] of [["csrf_token", csrf], ["selected", s.selected ? "false" : "true"]]) {
        const i = document.createElement("input"); i.type = "hidden"; i.name = name; i.value = value; f.append(i);
      }
      const b = cell("button", "toggle" + (s.selected ? " on" : ""), s.selected ? "★ Selected" : "☆ Select");
      b.type = "submit"; b.setAttribute("aria-pressed", String(!!s.selected));
      f.append(b); sel.append(f);
    }
    tr.append(sel);
  }
}

const PENDING = ["queued", "running", "scoring"];
let pollTimer = null;
async function refreshSubmissions() {
  const table = document.getElementById("submissions");
  if (!table) return;
  clearTimeout(pollTimer);
  try {
    const response = await fetch(table.dataset.poll, { headers: { Accept: "application/json" }, credentials: "same-origin" });
    if (!response.ok) return;
    const body = await response.json();
    const rows = body.submissions;
    renderRows(table, rows);
    const left = document.getElementById("quota-left");
    if (left && body.quota) left.textContent = String(body.quota.remaining_today);
    if (rows.some((r) => PENDING.includes(r.status))) pollTimer = setTimeout(refreshSubmissions, 1500);
  } catch (e) {
    pollTimer = setTimeout(refreshSubmissions, 5000);
  }
}

document.addEventListener("DOMContentLoaded", () => {
  tickCountdowns();
  setInterval(tickCountdowns, 1000);
  setupUpload();
  const table = document.getElementById("submissions");
  if (table && table.querySelector("tr[data-status=queued], tr[data-status=running], tr[data-status=scoring]")) refreshSubmissions();
});
