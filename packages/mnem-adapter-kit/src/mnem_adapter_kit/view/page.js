"use strict";
// The history page: a timeline of commits, a panel per item, a diff between two commits.
// Every stored text is set with textContent: values are the agent's, never markup; control
// and format characters (bidirectional overrides among them) are shown as escapes, as the
// terminal view shows them.
(function () {
  const KIND = { a: "added", m: "modified", r: "removed" };
  const SIGN = { added: "+", modified: "~", removed: "−" };
  const data = JSON.parse(document.getElementById("history-data").textContent);
  const commits = data.commits; // newest first
  const versions = data.versions;
  const commitIndex = new Map(commits.map((c, i) => [c.id, i]));
  const items = data.items.map((it, i) => ({ id: it.id, origin: it.origin, index: i, history: [] }));
  commits.forEach((c, ci) => {
    for (const [item, kind, version] of c.changes) {
      items[item].history.push({ commit: ci, kind: KIND[kind], version });
    }
  });

  // --- small helpers -------------------------------------------------------
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    if (attrs) {
      for (const [name, value] of Object.entries(attrs)) {
        if (value === undefined || value === null || value === false) continue;
        if (name === "text") node.textContent = clean(String(value));
        else if (name === "class") node.className = value;
        else node.setAttribute(name, value === true ? "" : String(value));
      }
    }
    for (const child of children) if (child) node.append(child);
    return node;
  }
  const UNSHOWN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu;
  function clean(text) {
    return text.replace(UNSHOWN, (ch) =>
      ch === "\n" || ch === "\t" ? ch : "\\u" + ch.codePointAt(0).toString(16).padStart(4, "0"));
  }
  const short = (id) => id.slice(0, 12);
  const count = (n, one, many) => `${n} ${n === 1 ? one : many}`;
  const when = (ms) => new Date(ms).toISOString().replace("T", " ");
  const asText = (v) => (typeof v === "string" ? v : JSON.stringify(v, null, 2));
  function summary(v, width = 120) {
    const text = JSON.stringify(v);
    return text.length > width ? text.slice(0, width - 1) + "…" : text;
  }
  const badge = (kind) => el("span", { class: "badge k-" + kind, text: SIGN[kind] + " " + kind });
  const sameValue = (a, b) =>
    JSON.stringify([a.value, a.provenance, a.details, a.event_time_ms, a.content_kind]) ===
    JSON.stringify([b.value, b.provenance, b.details, b.event_time_ms, b.content_kind]);

  // The value an item held just before history entry h (for removals).
  function previousVersion(item, position) {
    const older = item.history[position + 1];
    return older && older.version >= 0 ? older.version : -1;
  }
  function lastVersion(item) {
    for (const h of item.history) if (h.version >= 0) return h.version;
    return -1;
  }
  const currentVersion = (item) => (item.history.length && item.history[0].kind !== "removed" ? item.history[0].version : -1);
  const itemLabel = (item) => { const v = lastVersion(item); return v >= 0 ? versions[v].label : item.id; };
  const itemAdapter = (item) => { const v = lastVersion(item); return v >= 0 ? versions[v].adapter : "?"; };
  function changeVersion(item, ci) {
    // the version shown for an item's change in commit ci: the new value, or the one removed
    const hist = items[item].history;
    const position = hist.findIndex((h) => h.commit === ci);
    const h = hist[position];
    return h.version >= 0 ? h.version : previousVersion(items[item], position);
  }

  // The state after commit ci: for each item, its version index or -1.
  function stateAt(ci) {
    const state = new Int32Array(items.length).fill(-1);
    for (let i = commits.length - 1; i >= ci; i--) {
      for (const [item, kind, version] of commits[i].changes) state[item] = kind === "r" ? -1 : version;
    }
    return state;
  }

  // --- filter ---------------------------------------------------------------
  const filterBox = document.getElementById("filter");
  let needle = "";
  const commitText = new Map();
  function commitMatches(ci) {
    if (!needle) return true;
    let text = commitText.get(ci);
    if (text === undefined) {
      const c = commits[ci];
      const parts = [c.id, c.author, c.message];
      for (const [item, , version] of c.changes) {
        parts.push(items[item].id, itemLabel(items[item]));
        if (version >= 0) parts.push(versions[version].said);
      }
      text = parts.join("\n").toLowerCase();
      commitText.set(ci, text);
    }
    return text.includes(needle);
  }
  function itemMatches(item) {
    if (!needle) return true;
    const v = lastVersion(item);
    const extra = v >= 0 ? [versions[v].label, versions[v].adapter, versions[v].scope.join("/"), JSON.stringify(versions[v].value)] : [];
    return [item.id, ...extra].join("\n").toLowerCase().includes(needle);
  }

  // --- timeline ---------------------------------------------------------------
  const timeline = document.getElementById("timeline");
  const rows = [];
  function tally(c) {
    const counts = { added: 0, modified: 0, removed: 0 };
    for (const [, kind] of c.changes) counts[KIND[kind]] += 1;
    const box = el("span", { class: "tally" });
    for (const kind of ["added", "modified", "removed"]) {
      if (counts[kind]) box.append(el("span", { class: "badge k-" + kind, text: SIGN[kind] + counts[kind] }));
    }
    if (!c.changes.length) box.append(el("span", { class: "badge", text: "no changes" }));
    return box;
  }
  const FIRST_ROWS = 150;
  const MORE_ROWS = 500;
  let rendered = 0;
  function timelineRow(c, ci) {
    return el(
      "li",
      { class: "row", tabindex: 0, "data-commit": c.id, "data-index": ci, "aria-selected": "false" },
      el("span", { class: "id", text: short(c.id) }),
      el("span", { class: "time", text: when(c.time_ms) }),
      el("span", { class: "author", text: c.author }),
      what(c, ci),
      tally(c)
    );
  }
  // What a commit changed, in words: its first change (the item one click away), a count of
  // the others, then the commit's own message, muted.
  const WORDS = 90;
  function what(c, ci) {
    const box = el("span", { class: "what" });
    const message = (c.restore || c.message) + (c.parents.length > 1 ? "  (merge)" : "");
    if (c.changes.length) {
      const [item, kind] = c.changes[0];
      const v = versions[changeVersion(item, ci)];
      box.append(el("span", { class: "sign k-" + KIND[kind], text: SIGN[KIND[kind]] }), " ",
        el("button", { type: "button", class: "link", "data-item": items[item].id, text: v ? v.label : items[item].id }));
      if (v && KIND[kind] !== "removed") box.append(" ", el("span", { class: "said", text: words(v.said) }));
      if (c.changes.length > 1) box.append(el("span", { class: "muted", text: ` and ${c.changes.length - 1} more` }));
      box.append(" ");
    }
    box.append(el("span", { class: "msg", text: c.changes.length ? `· ${message}` : message }));
    return box;
  }
  function words(text) {
    const one = text.replace(/\s+/g, " ").trim();
    return one.length > WORDS ? one.slice(0, WORDS - 1) + "…" : one;
  }
  // Rows up to index `last`, appended in one go; the rest follow in slices so the page
  // answers clicks while a long history is still being listed.
  function renderRows(last) {
    const fragment = document.createDocumentFragment();
    for (; rendered <= last && rendered < commits.length; rendered++) {
      const row = timelineRow(commits[rendered], rendered);
      if (needle) row.hidden = !commitMatches(rendered);
      rows.push(row);
      fragment.append(row);
    }
    timeline.append(fragment);
    countTimeline();
    if (rendered >= commits.length) document.documentElement.dataset.complete = "true";
  }
  function renderTimeline() {
    renderRows(FIRST_ROWS - 1);
    const more = () => {
      if (rendered >= commits.length) return;
      renderRows(rendered + MORE_ROWS - 1);
      setTimeout(more, 0);
    };
    setTimeout(more, 0);
  }
  timeline.addEventListener("click", (event) => {
    const row = event.target.closest("li.row");
    if (!row || event.target.closest(".detail")) return;
    const link = event.target.closest(".what button.link");
    if (link) {
      showItem(items.findIndex((it) => it.id === link.dataset.item));
      return;
    }
    toggleCommit(Number(row.dataset.index));
  });
  timeline.addEventListener("keydown", (event) => {
    const row = event.target;
    if (row.matches && row.matches("li.row") && (event.key === "Enter" || event.key === " ")) {
      event.preventDefault();
      toggleCommit(Number(row.dataset.index));
    }
  });
  function countTimeline() {
    const shown = rows.filter((row) => !row.hidden).length;
    const loading = rendered < commits.length ? ` (listing ${rendered} of ${commits.length}…)` : "";
    document.getElementById("timeline-count").textContent =
      (needle ? count(shown, "commit matches", "commits match") : `${count(commits.length, "commit", "commits")}, newest first`) + loading;
  }
  function toggleCommit(ci, open) {
    renderRows(ci);
    const row = rows[ci];
    const existing = row.querySelector(".detail");
    if (existing && open !== true) {
      existing.remove();
      row.setAttribute("aria-selected", "false");
      return;
    }
    if (existing) return;
    remember("commit", commits[ci].id);
    row.setAttribute("aria-selected", "true");
    row.append(commitDetail(ci));
  }
  function commitDetail(ci) {
    const c = commits[ci];
    const detail = el("div", { class: "detail" });
    const facts = el("dl", { class: "facts" });
    const fact = (name, value) => facts.append(el("dt", { text: name }), el("dd", { class: "mono", text: value }));
    fact("commit", c.id);
    if (c.parents.length) fact(c.parents.length > 1 ? "parents" : "parent", c.parents.join(", "));
    fact("author", c.author);
    fact("time", when(c.time_ms));
    detail.append(facts, el("pre", { class: "message", text: c.message }));
    const actions = el("div", { class: "actions" });
    const action = (text, run) => {
      const button = el("button", { type: "button", text });
      button.addEventListener("click", run);
      actions.append(button);
    };
    if (ci + 1 < commits.length) action("Diff with the previous commit", () => showDiff(ci + 1, ci));
    action("Diff from here", () => showDiff(ci, undefined));
    action("Diff to here", () => showDiff(undefined, ci));
    detail.append(actions);
    if (c.undo) {
      detail.append(el("p", { class: "muted", text: "To restore what this commit changed to before it:" }),
        el("pre", { class: "message undo", text: c.undo.join("\n") }));
    }
    const list = el("ul", { class: "changes" });
    for (const [item, kind] of c.changes) {
      const v = versions[changeVersion(item, ci)];
      const link = el("button", { type: "button", class: "link", "data-item": items[item].id, text: v ? v.label : items[item].id });
      link.addEventListener("click", () => showItem(item));
      list.append(
        el("li", null, badge(KIND[kind]), el("span", { class: "badge", text: v ? v.adapter : "?" }), link,
          KIND[kind] !== "removed" && v ? el("span", { class: "value", text: words(v.said) }) : null)
      );
    }
    if (!c.changes.length) list.append(el("li", { class: "muted", text: "This commit changed nothing shown here." }));
    detail.append(list);
    return detail;
  }
  function focusCommit(id) {
    const ci = commitIndex.get(id);
    if (ci === undefined) return;
    setView("timeline");
    renderRows(ci);
    if (rows[ci].hidden) { filterBox.value = ""; applyFilter(); }
    toggleCommit(ci, true);
    rows[ci].scrollIntoView({ block: "center" });
    rows[ci].focus({ preventScroll: true });
  }

  // --- items ------------------------------------------------------------------
  const itemList = document.getElementById("items");
  const panel = document.getElementById("item-panel");
  const itemRows = [];
  const itemOrder = items.slice().sort((a, b) => {
    const ka = [itemAdapter(a), itemLabel(a)], kb = [itemAdapter(b), itemLabel(b)];
    return ka[0] < kb[0] ? -1 : ka[0] > kb[0] ? 1 : ka[1] < kb[1] ? -1 : ka[1] > kb[1] ? 1 : 0;
  });
  let itemsRendered = false;
  function renderItems() {
    if (itemsRendered) return;
    itemsRendered = true;
    const fragment = document.createDocumentFragment();
    for (const item of itemOrder) {
      const gone = currentVersion(item) < 0;
      const row = el(
        "li",
        { class: "row item-row" + (gone ? " gone" : ""), tabindex: 0, "data-item": item.id, "aria-selected": "false" },
        el("span", { class: "label", text: itemLabel(item), title: item.id }),
        el("span", { class: "badge", text: gone ? itemAdapter(item) + ", removed" : itemAdapter(item) })
      );
      row.addEventListener("click", () => showItem(item.index));
      row.addEventListener("keydown", (event) => {
        if (event.key === "Enter" || event.key === " ") { event.preventDefault(); showItem(item.index); }
      });
      itemRows[item.index] = row;
      fragment.append(row);
    }
    itemList.append(fragment);
    applyFilter();
  }
  function countItems() {
    const present = items.filter((item) => currentVersion(item) >= 0).length;
    const shown = itemRows.filter((row) => row && !row.hidden).length;
    document.getElementById("items-count").textContent =
      `${count(present, "item", "items")} in memory, ${items.length - present} removed` + (needle ? `; ${shown} match` : "");
  }
  function commitLink(id) {
    const ci = commitIndex.get(id);
    const c = ci === undefined ? data.other_commits[id] : commits[ci];
    const box = el("span");
    if (ci !== undefined) {
      const link = el("button", { type: "button", class: "link mono", "data-commit": id, text: short(id) });
      link.addEventListener("click", () => focusCommit(id));
      box.append(link);
    } else {
      box.append(el("span", { class: "mono", text: short(id), title: "on a merged branch" }));
    }
    if (c) box.append(" ", el("span", { class: "muted", text: `${when(c.time_ms)} · ${c.author} · ${c.message}` }));
    return box;
  }
  // An agent_step naming "<session>/turn-<n>" links to that session's items when they are in view.
  const SESSION_ADAPTERS = ["openai-agents", "agent-framework"];
  function stepLink(text) {
    const found = /^(.+)\/turn-\d+$/.exec(text);
    const session = found && items.find((it) => {
      const v = lastVersion(it);
      return v >= 0 && SESSION_ADAPTERS.includes(versions[v].adapter) && versions[v].scope[0] === found[1];
    });
    if (!session) return text;
    const link = el("button", { type: "button", class: "link", "data-session": found[1], text });
    link.addEventListener("click", () => { filterBox.value = found[1]; applyFilter(); showItem(session.index); });
    return link;
  }
  function facts(pairs) {
    const list = el("dl", { class: "facts" });
    for (const [name, value] of pairs) {
      if (value === undefined || value === null || value === "") continue;
      list.append(el("dt", { text: name }), el("dd", null, typeof value === "string" ? document.createTextNode(value) : value));
    }
    return list;
  }
  function showItem(index) {
    setView("items");
    remember("item", items[index].id);
    renderItems();
    const item = items[index];
    for (const row of itemRows) if (row) row.setAttribute("aria-selected", "false");
    const row = itemRows[index];
    row.setAttribute("aria-selected", "true");
    if (row.hidden) { filterBox.value = ""; applyFilter(); }
    row.scrollIntoView({ block: "nearest" });
    const current = currentVersion(item);
    const shown = versions[current >= 0 ? current : lastVersion(item)];
    panel.replaceChildren();
    panel.dataset.item = item.id;
    panel.append(el("h2", { text: shown ? shown.label : item.id }));
    const status = current >= 0 ? "in memory at HEAD" : null;
    const removedBy = current < 0 && item.history.length ? commitLink(commits[item.history[0].commit].id) : null;
    panel.append(facts([
      ["adapter", shown && shown.adapter],
      ["scope", shown && shown.scope.length ? JSON.stringify(shown.scope) : null],
      ["key", shown && shown.key !== item.id ? shown.key : null],
      ["node", item.id],
      ["status", status],
      ["removed by", removedBy],
    ]));
    if (shown) {
      panel.append(el("h3", { text: current >= 0 ? "Value" : "Last value" }), el("pre", { class: "value", text: asText(shown.value) }));
      const details = Object.entries(shown.details || {}).map(([k, v]) => [k, asText(v)]);
      if (details.length) panel.append(facts(details));
    }
    if (current >= 0) {
      const originId = item.origin || commits[item.history[0].commit].id;
      const origin = el("div", { id: "origin" });
      origin.append(facts([["commit", commitLink(originId)]]));
      const v = versions[current];
      const provenance = Object.entries(v.provenance).map(([name, text]) => [name, name === "agent_step" ? stepLink(text) : text]);
      origin.append(el("h3", { text: "Provenance" }));
      origin.append(provenance.length ? facts(provenance) : el("p", { class: "muted", text: "none recorded" }));
      if (v.event_time_ms !== null && v.event_time_ms !== undefined) origin.append(facts([["event time", when(v.event_time_ms)]]));
      panel.append(el("h3", { text: "Origin: the commit that set this value" }), origin);
    }
    panel.append(el("h3", { text: `History (${count(item.history.length, "change", "changes")}, newest first)` }));
    const table = el("table", null, el("thead", null, el("tr", null,
      el("th", { class: "c-commit", text: "commit" }), el("th", { class: "c-kind", text: "change" }), el("th", { text: "value" }))));
    const body = el("tbody");
    for (const h of item.history) {
      body.append(el("tr", null, el("td", null, commitLink(commits[h.commit].id)), el("td", null, badge(h.kind)),
        el("td", { class: "value mono", text: h.version >= 0 ? summary(versions[h.version].value) : "" })));
    }
    table.append(body);
    panel.append(table);
  }

  // --- diff -------------------------------------------------------------------
  const diffA = document.getElementById("diff-a");
  const diffB = document.getElementById("diff-b");
  const diffResult = document.getElementById("diff-result");
  let diffReady = false;
  function fillDiffChoices() {
    if (diffReady) return;
    diffReady = true;
    for (const select of [diffA, diffB]) {
      const fragment = document.createDocumentFragment();
      commits.forEach((c, ci) => {
        const text = `${short(c.id)} · ${when(c.time_ms)} · ${c.message}`;
        fragment.append(el("option", { value: ci, "data-commit": c.id, text: text.length > 90 ? text.slice(0, 89) + "…" : text }));
      });
      select.append(fragment);
    }
    diffA.value = String(Math.min(1, commits.length - 1));
    diffB.value = "0";
  }
  function showDiff(a, b) {
    fillDiffChoices();
    if (a !== undefined) diffA.value = String(a);
    if (b !== undefined) diffB.value = String(b);
    setView("diff");
    renderDiff();
  }
  const DIFF_SHOWN = 200;
  let diffEntries = [];
  let diffLimit = DIFF_SHOWN;
  function renderDiff() {
    diffEntries = [];
    diffLimit = DIFF_SHOWN;
    if (!commits.length) {
      document.getElementById("diff-summary").textContent = "No commits yet.";
      diffResult.replaceChildren();
      return;
    }
    const a = Number(diffA.value), b = Number(diffB.value);
    remember("diff", commits[a].id + ".." + commits[b].id);
    const sa = stateAt(a), sb = stateAt(b);
    const counts = { added: 0, modified: 0, removed: 0 };
    for (let i = 0; i < items.length; i++) {
      const va = sa[i], vb = sb[i];
      if (va === vb) continue;
      const before = va >= 0 ? versions[va] : null, after = vb >= 0 ? versions[vb] : null;
      if (before && after && sameValue(before, after)) continue;
      const kind = before ? (after ? "modified" : "removed") : "added";
      counts[kind] += 1;
      const shown = after || before;
      const search = [items[i].id, shown.label, shown.adapter].join("\n").toLowerCase();
      diffEntries.push({ item: i, kind, before, after, shown, search });
    }
    const tallyText = Object.entries(counts).filter(([, n]) => n).map(([k, n]) => `${n} ${k}`).join(", ") || "no differences";
    document.getElementById("diff-summary").textContent =
      `${short(commits[a].id)} → ${short(commits[b].id)}: ${tallyText}`;
    renderDiffList();
  }
  function renderDiffList() {
    const fragment = document.createDocumentFragment();
    const matching = diffEntries.filter((entry) => !needle || entry.search.includes(needle));
    for (const entry of matching.slice(0, diffLimit)) {
      const { item, kind, before, after, shown } = entry;
      const link = el("button", { type: "button", class: "link", text: shown.label });
      link.addEventListener("click", () => showItem(item));
      const sides = el("div", { class: "sides" });
      sides.append(el("div", null, el("span", { text: "before" }), el("pre", { text: before ? asText(before.value) : "(absent)" })));
      sides.append(el("div", null, el("span", { text: "after" }), el("pre", { text: after ? asText(after.value) : "(absent)" })));
      fragment.append(el("li", { "data-item": items[item].id, "data-kind": kind }, badge(kind), " ",
        el("span", { class: "badge", text: shown.adapter }), " ", link, sides));
    }
    if (matching.length > diffLimit) {
      const more = el("button", { type: "button", text: `Show all ${matching.length} differences` });
      more.addEventListener("click", () => { diffLimit = Infinity; renderDiffList(); });
      fragment.append(el("li", { class: "more" }, more));
    }
    diffResult.replaceChildren(fragment);
  }
  diffA.addEventListener("change", renderDiff);
  diffB.addEventListener("change", renderDiff);
  document.getElementById("diff-swap").addEventListener("click", () => {
    const a = diffA.value;
    diffA.value = diffB.value;
    diffB.value = a;
    renderDiff();
  });

  // --- views, filter, theme -----------------------------------------------------
  let view = "timeline";
  function setView(name) {
    view = name;
    for (const button of document.querySelectorAll("nav button")) {
      button.setAttribute("aria-pressed", String(button.dataset.view === name));
    }
    for (const section of document.querySelectorAll(".view")) section.hidden = section.id !== "view-" + name;
    if (name === "items") renderItems();
    if (name === "diff" && !diffReady) { fillDiffChoices(); renderDiff(); }
  }
  for (const button of document.querySelectorAll("nav button")) {
    button.addEventListener("click", () => setView(button.dataset.view));
  }
  function applyFilter() {
    needle = filterBox.value.trim().toLowerCase();
    rows.forEach((row, ci) => { row.hidden = !commitMatches(ci); });
    countTimeline();
    if (itemsRendered) {
      for (const item of items) itemRows[item.index].hidden = !itemMatches(item);
      countItems();
    }
    if (diffReady) renderDiffList();
  }
  let pending = 0;
  filterBox.addEventListener("input", () => {
    clearTimeout(pending);
    pending = setTimeout(applyFilter, 120);
  });
  const themes = ["auto", "light", "dark"];
  const themeButton = document.getElementById("theme");
  function setTheme(name) {
    if (name === "auto") delete document.documentElement.dataset.theme;
    else document.documentElement.dataset.theme = name;
    themeButton.textContent = "Theme: " + name;
    try { localStorage.setItem("mnem-history-theme", name); } catch (e) { /* file:// may refuse storage */ }
  }
  themeButton.addEventListener("click", () => {
    const now = document.documentElement.dataset.theme || "auto";
    setTheme(themes[(themes.indexOf(now) + 1) % themes.length]);
  });
  try {
    const saved = localStorage.getItem("mnem-history-theme");
    if (themes.includes(saved)) setTheme(saved);
  } catch (e) { /* no storage: follow the system */ }

  // --- links: #item=ID, #commit=ID, #diff=A..B --------------------------------------
  function remember(kind, value) {
    try { history.replaceState(null, "", "#" + kind + "=" + encodeURIComponent(value)); } catch (e) { /* file:// may refuse */ }
  }
  function follow() {
    const found = /^#(item|commit|diff)=(.*)$/.exec(location.hash);
    if (!found) return;
    let value;
    try {
      value = decodeURIComponent(found[2]);
    } catch (e) {
      return; // a malformed link opens the page as it is
    }
    if (found[1] === "item") {
      const item = items.find((it) => it.id === value);
      if (item) showItem(item.index);
    } else if (found[1] === "commit") {
      focusCommit(value);
    } else {
      const [a, b] = value.split("..");
      if (commitIndex.has(a) && commitIndex.has(b)) showDiff(commitIndex.get(a), commitIndex.get(b));
    }
  }

  // --- start --------------------------------------------------------------------
  const where = data.branch ? `branch ${data.branch}` : `detached at ${short(data.head || "")}`;
  document.getElementById("store").textContent = clean(
    `${data.store} · ${where} · ${count(commits.length, "commit", "commits")} · ${count(items.length, "item", "items")} · generated ${data.generated}`);
  renderTimeline();
  const header = document.querySelector("header");
  const measure = () => document.documentElement.style.setProperty("--header", header.offsetHeight + "px");
  measure();
  window.addEventListener("resize", measure);
  follow();
  document.documentElement.dataset.ready = "true";
  window.historyViewReadyAt = performance.now();
})();
