/* A Redis console under every redis-cli transcript of the page (settings: #redis-console-settings,
   written at build time by redis_course/webconsole/hook.py, strings in the page's language).
   Nothing is loaded before a click: the first Run starts one Web Worker (Pyodide + fakeredis, from
   this site's console/ folder) that every console of the page then shares; each console has its own
   fakeredis server with two clients.  Replies are formatted in Python by the same code that checks
   the transcripts, so the console prints what redis-cli prints. */
(function () {
  "use strict";
  var el = document.getElementById("redis-console-settings");
  if (!el) return;
  var cfg = JSON.parse(el.textContent);
  var S = cfg.strings;
  var PROMPT = /^redis(?:\(TX\))?> /;
  var worker = null, ready = false, failed = null, clickedAt = 0, firstAnswerMs = null, transferred = null;
  var pending = {}, nextId = 1, nextSid = 1, consoles = [], timings = {};

  function mb(bytes) {
    return (bytes / 1e6).toFixed(1);
  }

  function fill(text, fields) {
    return text.replace(/\{(\w+)\}/g, function (m, k) { return k in fields ? fields[k] : m; });
  }

  function h(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === "text") node.textContent = attrs[k];
      else if (k.slice(0, 2) === "on") node.addEventListener(k.slice(2), attrs[k]);
      else node.setAttribute(k, attrs[k]);
    });
    (children || []).forEach(function (c) { if (c) node.appendChild(c); });
    return node;
  }

  function status(text, kind) {
    consoles.forEach(function (c) { c.status(text, kind); });
  }

  function startWorker() {
    if (worker || failed) return;
    if (location.protocol === "file:") { failed = S.file; status(failed, "error"); return; }
    try {
      worker = new Worker(new URL(cfg.root + cfg.worker, location.href), {type: "module"});
    } catch (err) {
      failed = fill(S.failed, {detail: String(err.message || err)});
      status(failed, "error");
      return;
    }
    worker.onmessage = function (ev) {
      var m = ev.data;
      var html = document.documentElement;
      if ((m.op === "progress" || m.op === "ready") && !((m.stage || "ready") in timings)) {
        timings[m.stage || "ready"] = Math.round(m.ms);  // when each stage began, for the tests and bench/
        html.setAttribute("data-redis-console-timings", JSON.stringify(timings));
      }
      if (m.op === "progress") {
        if (m.loaded !== undefined && cfg.snapshot_bytes) {  // the snapshot arriving, or read from the cache
          status(fill(S.loading, {loaded: mb(Math.min(m.loaded, cfg.snapshot_bytes)), mb: mb(cfg.snapshot_bytes)}),
                 "busy");
        } else {
          status(fill(S[m.stage] || S.import, {mb: mb(cfg.transfer || cfg.bytes)}), "busy");
        }
      } else if (m.op === "ready") {
        ready = true;
        transferred = m.transferred;
        // how Python started ("snapshot", or "packages"/"wheels" when it was imported here), for the tests
        html.setAttribute("data-redis-console-path", m.path);
        html.setAttribute("data-redis-console-transferred", String(m.transferred));
        if (m.fallback) html.setAttribute("data-redis-console-fallback", m.fallback);
      } else if (m.op === "failed") {
        failed = fill(S.failed, {detail: m.detail});
        status(failed, "error");
        Object.keys(pending).forEach(function (id) { pending[id](null); delete pending[id]; });
      } else if (m.op === "result") {
        var done = pending[m.id];
        delete pending[m.id];
        if (done) done(m);
      }
    };
    worker.onerror = function (ev) {
      failed = fill(S.failed, {detail: ev.message || "worker"});
      status(failed, "error");
    };
    worker.postMessage({op: "init", pyodide: cfg.pyodide, wheels: cfg.wheels, packages: cfg.packages,
                        course: cfg.course, snapshot: cfg.snapshot});
  }

  function call(msg) {
    return new Promise(function (resolve) {
      if (failed) { resolve(null); return; }
      msg.id = nextId++;
      pending[msg.id] = resolve;
      worker.postMessage(msg);
    });
  }

  function commandsOf(code) {
    return code.textContent.split("\n").filter(function (l) { return PROMPT.test(l); })
      .map(function (l) { return l.replace(PROMPT, "").replace(/\s+$/, ""); });
  }

  function Console(code, anchor, index) {
    var self = this;
    var sid = nextSid++;
    var active = 0;
    var history = commandsOf(code), back = history.length;
    var outs = [0, 1].map(function (i) {
      return h("pre", {"class": "rc-out", "data-client": String(i), "aria-live": "polite", tabindex: "0"});
    });
    outs[1].hidden = true;
    var prompts = ["redis> ", "redis> "];
    var tabs = [0, 1].map(function (i) {
      return h("button", {type: "button", role: "tab", "class": "rc-tab", "aria-selected": String(i === 0),
                          title: S.client_help, text: fill(S.client, {n: i + 1}), onclick: function () { select(i); }});
    });
    var statusLine = h("span", {"class": "rc-status", role: "status"});
    var promptLabel = h("label", {"class": "rc-prompt", text: prompts[0]});
    var input = h("input", {type: "text", "class": "rc-input", spellcheck: "false", autocomplete: "off",
                            autocapitalize: "off", "aria-label": S.input, placeholder: S.input});
    var area = h("textarea", {"class": "rc-script", rows: String(Math.min(12, history.length + 1)),
                              spellcheck: "false", "aria-label": S.edit});
    area.value = history.join("\n");
    var node = h("div", {"class": "rc-console", role: "region", "aria-label": S.title, "data-console": String(sid),
                            "data-block": String(index)}, [
      h("div", {"class": "rc-bar"}, [
        h("div", {"class": "rc-tabs", role: "tablist"}, tabs),
        statusLine,
        h("button", {type: "button", "class": "md-button rc-reset", title: S.reset_help, text: S.reset,
                     onclick: function () { reset(); }}),
        h("button", {type: "button", "class": "md-button rc-close", text: S.close,
                     onclick: function () { close(); }})]),
      h("p", {"class": "rc-title", text: S.title}),
      outs[0], outs[1],
      h("form", {"class": "rc-line", onsubmit: function (ev) { ev.preventDefault(); submit(); }},
        [promptLabel, input]),
      h("details", {"class": "rc-edit"}, [
        h("summary", {text: S.edit}), area,
        h("button", {type: "button", "class": "md-button rc-run-all", text: S.run_all,
                     onclick: function () { run(area.value.split("\n")); }})])]);
    anchor.parentNode.insertBefore(node, anchor.nextSibling);
    this.node = node;

    this.status = function (text, kind) {
      statusLine.textContent = text;
      statusLine.setAttribute("data-kind", kind || "");
    };

    function select(i) {
      active = i;
      tabs.forEach(function (t, k) { t.setAttribute("aria-selected", String(k === i)); });
      outs.forEach(function (o, k) { o.hidden = k !== i; });
      promptLabel.textContent = prompts[i];
      node.setAttribute("data-active", String(i));
      input.focus();
    }

    function show(client, r) {
      var out = outs[client];
      var entry = h("div", {"class": "rc-entry" + (r.note ? " rc-noted" : "")});
      entry.appendChild(h("span", {"class": "rc-cmd", text: r.prompt + r.command}));
      entry.appendChild(document.createTextNode("\n"));
      if (r.lines.length) entry.appendChild(document.createTextNode(r.lines.join("\n") + "\n"));
      out.appendChild(entry);
      if (r.note) {
        var note = h("div", {"class": "rc-note", "data-note": r.note, role: "note",
                             text: fill(S[r.note], {name: r.name})});
        if (r.note === "lua" && cfg.notebook) {
          note.appendChild(document.createTextNode(" "));
          note.appendChild(h("a", {href: cfg.notebook, text: S.lua_link}));
        }
        out.appendChild(note);
      }
      prompts[client] = r.next;
      out.scrollTop = out.scrollHeight;
    }

    function run(lines) {
      var client = active;
      lines = lines.filter(function (l) { return l.trim(); });
      if (!lines.length) return Promise.resolve();
      return call({op: "run", sid: sid, client: client, lines: lines}).then(function (m) {
        if (!m) return;
        if (firstAnswerMs === null) {
          firstAnswerMs = Math.round(performance.now() - clickedAt);
          document.documentElement.setAttribute("data-redis-console-first-answer-ms", String(firstAnswerMs));
          var seconds = (firstAnswerMs / 1000).toFixed(1);
          status(transferred === null || transferred === undefined ? fill(S.ready, {seconds: seconds})
                 : fill(S.ready_bytes, {seconds: seconds, mb: mb(transferred)}), "ready");
        }
        if (m.error) { status(fill(S.failed, {detail: m.error}), "error"); return; }
        m.results.forEach(function (r) { show(client, r); });
        if (client === active) promptLabel.textContent = prompts[client];
        node.setAttribute("data-runs", String(Number(node.getAttribute("data-runs") || 0) + 1));
      });
    }

    function submit() {
      var line = input.value;
      if (!line.trim()) return;
      history.push(line);
      back = history.length;
      input.value = "";
      run([line]);
    }

    input.addEventListener("keydown", function (ev) {
      if (ev.key === "ArrowUp" && back > 0) { back -= 1; input.value = history[back]; ev.preventDefault(); }
      else if (ev.key === "ArrowDown") {
        back = Math.min(history.length, back + 1);
        input.value = back < history.length ? history[back] : "";
        ev.preventDefault();
      }
    });

    function reset() {
      return call({op: "reset", sid: sid}).then(function () {
        outs.forEach(function (o) { o.textContent = ""; });
        prompts = ["redis> ", "redis> "];
        promptLabel.textContent = prompts[active];
      });
    }

    function close() {
      node.remove();
      consoles.splice(consoles.indexOf(self), 1);
      code.rcConsole = null;
    }

    this.run = run;
    this.focus = function () { input.focus(); };
  }

  function open(code, anchor, index) {
    if (code.rcConsole && code.rcConsole.node.isConnected) { code.rcConsole.focus(); return; }
    if (!clickedAt) clickedAt = performance.now();
    var c = new Console(code, anchor, index);
    code.rcConsole = c;
    consoles.push(c);
    if (failed) c.status(failed, "error");
    else if (!ready) c.status(fill(S.runtime, {mb: mb(cfg.transfer || cfg.bytes)}), "busy");
    startWorker();
    if (!failed) c.run(commandsOf(code));
  }

  // a check-your-understanding question's commands (redis_course.quiz) get a console too, numbered
  // apart ("q0", "q1", ...) so that the page's transcripts keep their own numbers
  var blocks = 0, questions = 0;
  Array.prototype.forEach.call(document.querySelectorAll("pre > code"), function (code) {
    var first = code.textContent.split("\n").filter(function (l) { return l.trim(); })[0];
    if (!first || !PROMPT.test(first)) return;
    var quiz = !!code.closest(".course-quiz");
    var index = quiz ? "q" + questions++ : blocks++;
    var block = code.closest(".highlight") || code.parentNode;
    var bar = h("div", {"class": "rc-launch"}, [
      h("button", {type: "button", "class": "md-button " + (quiz ? "rc-run-question" : "rc-run"), title: S.run_title,
                   text: "▶ " + S.run, onclick: function () { open(code, bar, index); }})]);
    block.parentNode.insertBefore(bar, block.nextSibling);
  });
})();
