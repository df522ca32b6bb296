// fsmgen preview: the page's script. Every text from a spec is put in with textContent
// (never as HTML); the diagram is Mermaid's SVG of the Mermaid text fsmgen wrote, whose
// labels package mermaid escapes.
"use strict";

const $ = (id) => document.getElementById(id);

// el makes an element with attributes and a text.
function el(tag, attrs, text) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "dataset") {
      Object.assign(e.dataset, v);
    } else {
      e.setAttribute(k, v);
    }
  }
  if (text !== undefined) e.textContent = text;
  return e;
}

function clear(node) {
  while (node.firstChild) node.removeChild(node.firstChild);
}

const emptySession = () => ({ role: "", policies: [], set: [], fail: [], guards: [], now: [], steps: [] });
const copy = (v) => JSON.parse(JSON.stringify(v));

// One entry per spec: its view, its session and the session's undo stack.
const specs = [];
let current = 0;
let gen = -1;
let drawn = ""; // the Mermaid text of the diagram shown
let renders = 0;
let lastRun = null;

// What the page has done, for its tests: ready once started, the diagrams drawn, the
// sessions run, when it was ready (ms since the navigation started), and the changes
// still under way.
window.fsmgenPreview = { ready: false, renders: 0, runs: 0, loadedAt: 0, busy: 0 };

async function getJSON(url, init) {
  const r = await fetch(url, init);
  const body = await r.json();
  if (!r.ok) throw new Error(body.error || r.statusText);
  return body;
}

async function start() {
  mermaid.initialize({
    startOnLoad: false,
    securityLevel: "strict",
    maxTextSize: 50000000,
    maxEdges: 1000000,
    state: { useMaxWidth: true },
  });
  const list = await getJSON("api/specs");
  gen = list.gen;
  list.specs.forEach((s, i) => {
    specs[i] = { path: s.path, version: s.version, view: null, session: emptySession(), undo: [] };
  });
  document.querySelectorAll(".spec-tab").forEach((b) => {
    b.addEventListener("click", () => select(Number(b.dataset.spec)));
  });
  $("undo").addEventListener("click", undo);
  $("actual").addEventListener("change", () => {
    $("diagram").classList.toggle("actual", $("actual").checked);
    if (lastRun) highlight(lastRun);
  });
  $("whole").addEventListener("click", async () => {
    const sp = specs[current];
    sp.whole = !sp.whole;
    $("whole").textContent = sp.whole ? "Draw around the active state" : "Draw the whole diagram (slow)";
    if (sp.whole) await draw(sp.view.machine.mermaid);
    else if (lastRun && lastRun.diagram) await draw(lastRun.diagram);
  });
  $("reset").addEventListener("click", reset);
  const m = /^#spec=(\d+)$/.exec(location.hash);
  await select(m && Number(m[1]) < specs.length ? Number(m[1]) : 0);
  window.fsmgenPreview.loadedAt = performance.now();
  window.fsmgenPreview.ready = true;
  follow();
}

async function select(i) {
  current = i;
  history.replaceState(null, "", "#spec=" + i);
  document.querySelectorAll(".spec-tab").forEach((b) => b.classList.toggle("selected", Number(b.dataset.spec) === i));
  drawn = "";
  await serially(() => load(i));
}

// follow waits for the spec files to change, and loads the one shown when it does.
async function follow() {
  for (;;) {
    try {
      const list = await getJSON("api/wait?gen=" + gen);
      $("live").classList.remove("lost");
      if (list.gen === gen) continue;
      gen = list.gen;
      let reload = false;
      list.specs.forEach((s, i) => {
        if (specs[i].version !== s.version) {
          specs[i].version = s.version;
          if (i === current) reload = true;
        }
      });
      if (reload) await serially(() => load(current));
    } catch (e) {
      $("live").classList.add("lost");
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}

// load fetches spec i's findings and machine, draws it and runs its session on it.
async function load(i) {
  const view = await getJSON("api/spec?i=" + i);
  if (i !== current) return;
  const sp = specs[i];
  sp.view = view;
  sp.version = view.version;
  showFindings(view);
  const m = view.machine;
  $("stale").hidden = !view.stale;
  $("sim").hidden = !m;
  $("picture").hidden = !m;
  if (!m) return;
  $("machine-name").textContent = m.name;
  buildControls(sp);
  $("big").hidden = !m.big;
  if (m.big) {
    $("big-text").textContent = m.name + " has " + m.states.length + " states and " + m.arrows +
      " arrows, more than Mermaid lays out in a second: the diagram shows the states around the active one, one transition away.";
    $("whole").textContent = sp.whole ? "Draw around the active state" : "Draw the whole diagram (slow)";
  } else {
    await draw(m.mermaid);
  }
  await run();
}

function showFindings(view) {
  $("spec-path").textContent = view.path;
  const ul = $("findings");
  clear(ul);
  for (const f of view.findings) {
    const li = el("li", { class: "finding " + f.severity, dataset: { line: String(f.line), col: String(f.col) } });
    li.appendChild(el("span", { class: "pos" }, f.file + ":" + f.line + ":" + f.col));
    li.appendChild(document.createTextNode(": "));
    li.appendChild(el("span", { class: "severity" }, f.severity));
    li.appendChild(document.createTextNode(": "));
    li.appendChild(el("span", { class: "message" }, f.message));
    ul.appendChild(li);
  }
  const errors = view.findings.filter((f) => f.severity === "error").length;
  const warnings = view.findings.length - errors;
  $("verdict").textContent = view.findings.length === 0 ? "No findings: the spec checks clean."
    : errors + " error(s), " + warnings + " warning(s)";
  $("verdict").className = errors ? "bad" : "good";
}

async function draw(text) {
  if (text === drawn) return;
  const box = $("diagram");
  $("diagram-error").hidden = true;
  try {
    const { svg } = await mermaid.render("fsm-diagram-" + ++renders, text);
    box.innerHTML = svg; // Mermaid's own SVG, drawn from text whose labels are escaped
    drawn = text;
    window.fsmgenPreview.renders++;
  } catch (e) {
    $("diagram-error").hidden = false;
    $("diagram-error").textContent = "Mermaid could not draw the diagram: " + (e && e.message ? e.message : String(e));
  }
  if (lastRun) highlight(lastRun);
}

// buildControls makes the toggles and inputs of the machine's hook guards, roles,
// policies, context fields and failing actions, set from the session.
function buildControls(sp) {
  const m = sp.view.machine;
  const s = sp.session;
  const box = (id, items, make) => {
    const fs = $(id);
    fs.querySelectorAll(":scope > :not(legend)").forEach((n) => n.remove());
    fs.hidden = items.length === 0;
    items.forEach((it) => fs.appendChild(make(it)));
  };
  const check = (cls, name, doc, checked, disabled, onchange) => {
    const label = el("label", { class: cls, title: doc || "" });
    const input = el("input", { type: "checkbox" });
    input.dataset.name = name;
    input.checked = checked;
    input.disabled = disabled;
    input.addEventListener("change", () => onchange(input.checked));
    label.appendChild(input);
    label.appendChild(el("span", {}, name));
    return label;
  };
  box("hooks", m.hooks, (g) => check("hook", g.name, g.doc, s.now.includes(g.name), false, (on) => {
    change((s) => {
      s.now = toggle(s.now, g.name, on);
      if (s.steps.length === 0) s.guards = s.now.slice();
    });
  }));
  box("roles", [{ name: "", doc: "fire without a role" }, ...m.roles], (r) => {
    const label = el("label", { class: "role", title: r.doc || "" });
    const input = el("input", { type: "radio", name: "role" });
    input.dataset.name = r.name;
    input.checked = s.role === r.name;
    input.addEventListener("change", () => change((s) => { s.role = r.name; }));
    label.appendChild(input);
    label.appendChild(el("span", {}, r.name === "" ? "(no role)" : r.name));
    return label;
  });
  if (m.roles.length === 0) $("roles").hidden = true;
  box("policies", m.policies, (p) => check("policy", p.name, p.default ? "on by default (fsmgen sim cannot turn it off)" : p.doc,
    p.default || s.policies.includes(p.name), p.default, (on) => change((s) => { s.policies = toggle(s.policies, p.name, on); })));
  box("context", m.fields, (f) => fieldInput("ctx", f, valueOf(s.set, f.name), (v) => change((s) => { s.set = setValue(s.set, f.name, v); })));
  box("fails", m.failable, (a) => check("fail", a.name, a.doc, s.fail.includes(a.name), false,
    (on) => change((s) => { s.fail = toggle(s.fail, a.name, on); })));
  // Payload inputs, one group per event that has a payload.
  const pay = $("payloads");
  clear(pay);
  for (const e of m.events) {
    if (e.payload.length === 0) continue;
    const fs = el("fieldset", { class: "payload" });
    fs.dataset.event = e.name;
    fs.appendChild(el("legend", {}, "Payload of " + e.name));
    for (const f of e.payload) {
      const old = sp.payloads && sp.payloads[e.name] ? valueOf(sp.payloads[e.name], f.name) : "";
      fs.appendChild(fieldInput("payload", f, old, (v) => {
        sp.payloads = sp.payloads || {};
        sp.payloads[e.name] = setValue(sp.payloads[e.name] || [], f.name, v);
      }));
    }
    pay.appendChild(fs);
  }
}

// fieldInput is a labelled input for a field's value as sim's --set takes it.
function fieldInput(cls, f, value, onchange) {
  const label = el("label", { class: cls, title: f.doc || "" });
  label.appendChild(el("span", { class: "field-name" }, f.name));
  label.appendChild(el("span", { class: "field-type" }, " (" + f.type + (f.required ? ", required" : "") + ") "));
  let input;
  if (f.values && f.values.length && f.type === "enum") {
    input = el("select");
    input.appendChild(el("option", { value: "" }, "(unset)"));
    for (const v of f.values) input.appendChild(el("option", { value: JSON.stringify(v) }, v));
  } else if (f.type === "bool") {
    input = el("select");
    for (const [v, t] of [["", "(unset)"], ["true", "true"], ["false", "false"]]) input.appendChild(el("option", { value: v }, t));
  } else {
    input = el("input", { type: "text", placeholder: placeholder(f.type) });
  }
  input.dataset.field = f.name;
  input.value = value;
  input.addEventListener("change", () => onchange(input.value));
  label.appendChild(input);
  return label;
}

function placeholder(type) {
  if (type.startsWith("[]")) return '["a", "b"]';
  if (type.startsWith("map")) return '{"k": "v"}';
  return { int: "3", float: "0.5", duration: "15m", time: "2026-01-02T15:04:05Z" }[type] || "text";
}

const toggle = (list, name, on) => on ? [...list.filter((x) => x !== name), name] : list.filter((x) => x !== name);
const valueOf = (list, name) => (list.find((x) => x.field === name) || { value: "" }).value;
const setValue = (list, name, v) => [...list.filter((x) => x.field !== name), ...(v === "" ? [] : [{ field: name, value: v }])];

// One thing at a time: a click while the server answers the one before waits for it, so
// that the answers come back in order.
let chain = Promise.resolve();
function serially(f) {
  window.fsmgenPreview.busy++;
  const p = chain.then(f);
  chain = p.catch(() => {}).then(() => { window.fsmgenPreview.busy--; });
  return p;
}

// change applies f to a copy of the session, keeping the old one for undo, and runs it.
const change = (f) => serially(() => changeNow(f));

async function changeNow(f) {
  const sp = specs[current];
  sp.undo.push(copy(sp.session));
  const s = copy(sp.session);
  f(s);
  sp.session = s;
  await run();
}

const fire = (name) => serially(async () => {
  const sp = specs[current];
  const payload = sp.payloads && sp.payloads[name] ? sp.payloads[name] : [];
  await changeNow((s) => { s.steps.push({ event: name, guards: s.now.slice(), payload: copy(payload) }); });
  if (lastRun && lastRun.inputError) {
    sp.session = sp.undo.pop();
  }
});

const undo = () => serially(async () => {
  const sp = specs[current];
  if (sp.undo.length === 0) return;
  sp.session = sp.undo.pop();
  buildControls(sp);
  await run();
});

const reset = () => change((s) => { s.steps = []; s.guards = s.now.slice(); });

// run sends the session to the server, which runs it through the interpreter, and shows
// the outcome.
async function run() {
  const i = current;
  const sp = specs[i];
  let ans;
  try {
    ans = await getJSON("api/sim?i=" + i, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ session: sp.session }),
    });
    $("sim-error").hidden = true;
  } catch (e) {
    $("sim-error").hidden = false;
    $("sim-error").textContent = "The simulator failed: " + e.message;
    return;
  }
  if (i !== current) return;
  const r = ans.run;
  if (!r.inputError) sp.session = r.session;
  lastRun = r;
  if (r.diagram && !sp.whole) await draw(r.diagram);
  show(sp, r);
  window.fsmgenPreview.runs++;
}

function show(sp, r) {
  $("state").textContent = r.configuration && r.configuration.length ? r.configuration.join(", ") : r.state;
  $("state").dataset.state = r.state; // as fsmgen sim names it
  $("done").hidden = !r.done;
  const buttons = (id, names, cls) => {
    const box = $(id);
    clear(box);
    for (const n of names) {
      const b = el("button", { type: "button", class: cls }, n);
      b.dataset.event = n;
      b.addEventListener("click", () => fire(n));
      box.appendChild(b);
    }
  };
  buttons("allowed", r.allowed, "event");
  buttons("refused", r.refused, "event refused-event");
  if (r.allowed.length === 0) $("allowed").appendChild(el("span", { class: "none" }, r.done ? "none: the machine is done" : "none"));
  $("input-error").hidden = !r.inputError;
  $("input-error").textContent = r.inputError || "";

  const log = $("log");
  clear(log);
  const entry = (e) => {
    const li = el("li", { class: e.accepted ? "accepted" : e.skipped ? "skipped" : "refused" });
    li.dataset.index = String(e.index);
    if (e.index < 0) {
      li.appendChild(el("span", { class: "line" }, e.accepted ? "start: " + (e.configuration || [e.to]).join(", ") : "start refused"));
    } else if (e.skipped) {
      li.appendChild(el("span", { class: "line" }, e.index + ": " + e.event + ": refused when tried, not fired (it would be accepted now)"));
    } else if (e.accepted) {
      li.appendChild(el("span", { class: "line" }, e.index + ": " + e.event + ": " + e.from + " -> " + e.to));
    } else {
      const f = e.refusal;
      li.appendChild(el("span", { class: "line" }, e.index + ": " + e.event + ": refused in " + f.state + " (" + f.reason + "): " + f.message));
    }
    const more = [];
    if (e.configuration && e.index >= 0) more.push("configuration: " + e.configuration.join(", "));
    if (e.actions && e.actions.length) more.push("actions: " + e.actions.join(", "));
    if (e.limit) more.push(e.limit);
    for (const [k, v] of Object.entries(e.wrote || {})) more.push(k + " = " + JSON.stringify(v));
    if (e.refusal) {
      if (e.index < 0) more.push("(" + e.refusal.reason + "): " + e.refusal.message);
      for (const fe of e.refusal.errors || []) more.push(fe.field + ": " + fe.message);
      more.push("allowed: " + (e.refusal.allowed.length ? e.refusal.allowed.join(", ") : "(none)"));
    }
    for (const m of more) li.appendChild(el("div", { class: "detail" }, m));
    log.appendChild(li);
  };
  if (r.start) entry(r.start);
  r.log.forEach(entry);

  const counters = $("counters");
  clear(counters);
  for (const [k, v] of Object.entries(r.counters || {})) counters.appendChild(el("div", { class: "counter" }, "counter " + k + ": " + JSON.stringify(v)));
  const notes = $("notes");
  clear(notes);
  for (const n of r.notes) notes.appendChild(el("li", {}, n));
  $("command").textContent = r.command;
  $("unreplayable").hidden = r.unreplayable.length === 0;
  $("unreplayable").textContent = "The command cannot replay: " + r.unreplayable.join("; ");
  // The toggles follow the session (after undo, or a name the spec dropped).
  document.querySelectorAll("#hooks input").forEach((i) => { i.checked = r.session.now.includes(i.dataset.name); });
  document.querySelectorAll("#roles input").forEach((i) => { i.checked = r.session.role === i.dataset.name; });
  document.querySelectorAll("#fails input").forEach((i) => { i.checked = r.session.fail.includes(i.dataset.name); });
  document.querySelectorAll("#policies input").forEach((i) => { if (!i.disabled) i.checked = r.session.policies.includes(i.dataset.name); });
  document.querySelectorAll("#context [data-field]").forEach((i) => { i.value = valueOf(r.session.set, i.dataset.field); });
  highlight(r);
}

// highlight marks the active states (and the compound states around them) on the diagram.
// Mermaid names a state's group "<diagram>-state-<id>-<n>" (a composite state's too);
// each gets data-state="<id>" once the diagram is drawn.
function highlight(r) {
  const svg = $("diagram").querySelector("svg");
  if (!svg) return;
  if (!svg.dataset.marked) {
    const prefix = svg.id + "-state-";
    svg.querySelectorAll("g[id]").forEach((n) => {
      if (!n.id.startsWith(prefix)) return;
      const m = /^(.+)-[0-9]+$/.exec(n.id.slice(prefix.length));
      if (m) n.dataset.state = m[1];
    });
    svg.dataset.marked = "1";
  }
  svg.querySelectorAll(".active, .within").forEach((n) => n.classList.remove("active", "within"));
  const mark = (ids, cls) => {
    for (const id of ids) {
      svg.querySelectorAll('g[data-state="' + CSS.escape(id) + '"]').forEach((n) => n.classList.add(cls));
    }
  };
  mark(r.within, "within");
  mark(r.active, "active");
  // Bring the active state into the diagram's view (when the diagram is taller than it).
  const a = svg.querySelector("g.active");
  if (a) {
    const box = $("diagram");
    const ar = a.getBoundingClientRect();
    const br = box.getBoundingClientRect();
    if (ar.top < br.top || ar.bottom > br.bottom) box.scrollTop += ar.top - br.top - (br.height - ar.height) / 2;
    if (ar.left < br.left || ar.right > br.right) box.scrollLeft += ar.left - br.left - (br.width - ar.width) / 2;
  }
}

document.addEventListener("DOMContentLoaded", () => {
  start().catch((e) => {
    $("sim-error").hidden = false;
    $("sim-error").textContent = "The page failed to start: " + e.message;
  });
});
