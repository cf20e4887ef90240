// The review page. Every string from the export is hostile: it reaches the page only through
// textContent, never as markup.
"use strict";

const token = document.querySelector('meta[name="selfbench-token"]').content;
const dropped = new Set();
let selected = null;

function el(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (className) node.className = className;
  return node;
}

async function getJson(url) {
  const response = await fetch(url, { headers: { Accept: "application/json" } });
  const value = await response.json();
  if (!response.ok) throw new Error(value.error || response.statusText);
  return value;
}

function showRun(summary) {
  const manifest = summary.manifest;
  document.getElementById("file").textContent = summary.file;
  const counts = manifest.candidateCounts;
  const rows = [
    ["Run", manifest.runId],
    ["Repository", manifest.repository.url],
    ["Commit", manifest.repository.commit],
    ["Candidates", `easy ${counts.easy} · medium ${counts.medium} · hard ${counts.hard}`],
    ["Accepted", String(manifest.acceptedCount)],
    ["Built by", manifest.version],
  ];
  const list = document.getElementById("run");
  list.replaceChildren();
  for (const [name, value] of rows) {
    list.append(el("dt", name), el("dd", value));
  }
}

function metricsText(audit) {
  if (!audit || !audit.metrics) return "unknown";
  const m = audit.metrics;
  return `${m.implementationFiles} files · ${m.implementationChangedLines} lines · ${m.testFiles} test files`;
}

function percent(score) {
  return score === null || score === undefined ? "no score" : `${Math.round(score * 100)}%`;
}

function listed(items, none) {
  return items && items.length ? items.join(", ") : none;
}

function mutationText(mutation) {
  if (!mutation) return "not measured";
  const notes = [];
  if (mutation.capped) notes.push("a fixed-seed sample of the mutants");
  if (mutation.stoppedEarly) notes.push("stopped once the verdict could not change");
  const caught = (mutation.caughtByPassToPass || []).length;
  const killed = `${mutation.killed}/${mutation.generated} killed (${percent(mutation.score)})`;
  const text = caught ? `${killed}, ${caught} more by pass-to-pass` : killed;
  return notes.length ? `${text}; ${notes.join("; ")}` : text;
}

function passToPassText(basis) {
  if (!basis) return "not recorded";
  const count = `${basis.selected.length} selected`;
  return basis.detail ? `${basis.basis}: ${basis.detail} (${count})` : `${basis.basis} (${count})`;
}

function dependenciesText(dependencies) {
  const added = (dependencies.added || []).map((item) => `${item.name} (${item.manifest})`);
  const text = listed(added, "none");
  return added.length && dependencies.agent ? `${text}; installed for the agent too` : text;
}

// The quality verdict and its evidence, the first thing shown of a task.
function qualityView(quality) {
  const section = el("section", null, "quality");
  if (!quality) {
    section.append(el("h3", "Quality: not checked", "quality-verdict quality-none"));
    section.append(el("p", "This task was exported without a quality record.", "note"));
    return section;
  }
  section.append(el("h3", `Quality: ${quality.verdict}`, `quality-verdict quality-${quality.verdict}`));
  const reasons = el("ul", null, "quality-reasons");
  for (const reason of quality.reasons) reasons.append(el("li", reason));
  if (!quality.reasons.length) reasons.append(el("li", "no reason given", "note"));
  section.append(reasons);
  const ablation = quality.ablation || {};
  const instruction = quality.instruction || {};
  const rows = [
    ["Mutation score", mutationText(quality.mutation)],
    ["Unneeded parts", listed(ablation.unneeded, "none")],
    ["Moved out of the gold", listed(ablation.moved, "none")],
    ["Pass-to-pass basis", passToPassText(quality.passToPass)],
    ["Missing from the instruction", listed(instruction.missing, "none")],
    ["Added dependencies", dependenciesText(quality.dependencies || {})],
  ];
  const facts = el("dl", null, "quality-facts");
  for (const [name, value] of rows) facts.append(el("dt", name), el("dd", value));
  section.append(facts);
  if (quality.mutation && quality.mutation.note) section.append(el("p", quality.mutation.note, "note"));
  return section;
}

function showTasks(summary) {
  const body = document.querySelector("#tasks tbody");
  body.replaceChildren();
  for (const task of summary.tasks) {
    const row = el("tr", null, "task");
    row.dataset.taskId = task.taskId;
    const verdict = el("td", task.verdict, `verdict verdict-${task.verdict.replace(" ", "-")}`);
    if (task.reason) verdict.title = task.reason;
    const toggle = el("button", "Drop", "toggle");
    toggle.type = "button";
    toggle.addEventListener("click", (event) => {
      event.stopPropagation();
      if (dropped.has(task.taskId)) dropped.delete(task.taskId);
      else dropped.add(task.taskId);
      row.classList.toggle("dropped", dropped.has(task.taskId));
      toggle.textContent = dropped.has(task.taskId) ? "Restore" : "Drop";
      updateWriteButton(summary);
    });
    const cell = el("td");
    cell.append(toggle);
    const level = task.quality ? task.quality.verdict : "not checked";
    const quality = el("td", level, `quality quality-${level.replace(" ", "-")}`);
    if (task.quality) quality.title = task.quality.reasons.join("\n");
    row.append(
      el("td", task.taskId, "id"),
      el("td", task.difficulty, "difficulty"),
      quality,
      verdict,
      el("td", metricsText(task.audit), "metrics"),
      cell,
    );
    row.addEventListener("click", () => selectTask(task.taskId));
    body.append(row);
  }
  updateWriteButton(summary);
}

function updateWriteButton(summary) {
  const kept = summary.tasks.length - dropped.size;
  document.getElementById("write").textContent = `Write clean export (${kept} of ${summary.tasks.length} tasks)`;
}

function diffView(patch) {
  const pre = el("pre", null, "diff");
  for (const line of patch.text.split("\n")) {
    let kind = "ctx";
    if (line.startsWith("diff --git ")) kind = "file";
    else if (line.startsWith("@@")) kind = "hunk";
    else if (line.startsWith("+++ ") || line.startsWith("--- ")) kind = "meta";
    else if (line.startsWith("+")) kind = "add";
    else if (line.startsWith("-")) kind = "del";
    else if (!line.startsWith(" ")) kind = "meta";
    pre.append(el("span", line, kind));
  }
  const wrap = el("div");
  wrap.append(pre);
  if (patch.omittedBytes > 0) {
    wrap.append(el("p", `${patch.omittedBytes} of ${patch.bytes} bytes not shown.`, "note"));
  }
  return wrap;
}

function showDetail(task) {
  const detail = document.getElementById("detail");
  detail.replaceChildren();
  detail.append(el("h2", task.taskId));
  detail.append(qualityView(task.quality));
  detail.append(el("h3", "Prompt"), el("pre", task.prompt, "prompt"));
  if (task.promptOmittedBytes > 0) {
    detail.append(el("p", `${task.promptOmittedBytes} of ${task.promptBytes} bytes not shown.`, "note"));
  }
  const audit = task.audit || {};
  detail.append(el("h3", "Validation (as recorded in the export)"));
  const validation = task.validation;
  const verdict = !validation ? "not validated" : validation.accepted ? "accepted" : "rejected";
  detail.append(el("p", validation && validation.reason ? `${verdict}: ${validation.reason}` : verdict));
  detail.append(el("h3", "Audit (as recorded in the export)"), el("p", metricsText(audit)));
  for (const blocker of audit.blockers || []) detail.append(el("p", `blocker: ${blocker}`, "note"));
  for (const warning of audit.warnings || []) detail.append(el("p", `warning: ${warning}`, "note"));
  detail.append(el("h3", "Definition"), el("pre", JSON.stringify(task.definition, null, 2)));
  detail.append(el("h3", "Gold patch"), diffView(task.goldPatch));
  detail.append(el("h3", "Held-out test patch"), diffView(task.testPatch));
  detail.append(el("h3", "Verifier script (tests/test.sh)"), textView(task.verifierScript, "script verifier-script"));
  detail.append(el("h3", "Agent image (environment/Dockerfile)"), textView(task.agentDockerfile, "script agent-dockerfile"));
  detail.append(el("h3", "Verifier image (tests/Dockerfile)"), textView(task.verifierDockerfile, "script verifier-dockerfile"));
  detail.append(el("h3", "Harbor configuration (task.toml, with the agent's allowed hosts)"), textView(task.taskToml, "script task-toml"));
}

function textView(file, className) {
  const wrap = el("div");
  wrap.append(el("pre", file.text, className));
  if (file.omittedBytes > 0) {
    wrap.append(el("p", `${file.omittedBytes} of ${file.bytes} bytes not shown.`, "note"));
  }
  return wrap;
}

async function selectTask(taskId) {
  selected = taskId;
  for (const row of document.querySelectorAll("tr.task")) {
    row.classList.toggle("selected", row.dataset.taskId === taskId);
  }
  try {
    const task = await getJson(`/api/tasks/${encodeURIComponent(taskId)}`);
    if (selected === taskId) showDetail(task);
  } catch (error) {
    setStatus(`Cannot load ${taskId}: ${error.message}`, true);
  }
}

function setStatus(text, isError) {
  const status = document.getElementById("status");
  status.textContent = text;
  status.classList.toggle("error", Boolean(isError));
}

async function writeClean() {
  setStatus("Writing…", false);
  try {
    const response = await fetch("/api/clean-export", {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Selfbench-Token": token },
      body: JSON.stringify({ drop: [...dropped].sort() }),
    });
    const value = await response.json();
    if (!response.ok) throw new Error(value.error || response.statusText);
    setStatus(`Wrote ${value.path} (${value.manifest.acceptedCount} tasks, verified).`, false);
  } catch (error) {
    setStatus(`Clean export failed: ${error.message}`, true);
  }
}

async function start() {
  try {
    const summary = await getJson("/api/export");
    showRun(summary);
    showTasks(summary);
    document.getElementById("write").addEventListener("click", writeClean);
    document.body.dataset.ready = "true";
  } catch (error) {
    setStatus(`Cannot load the export: ${error.message}`, true);
  }
}

start();
