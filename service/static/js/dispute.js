// The dispute report about one event (`matchlog audit MATCH --seq N`): the state before, what was
// asked and answered, the ruling and the rule, the legal alternatives, and the hash proof. The
// service decides what the reader's token may see of it; this only lays it out.

import { getJson, withToken } from "matchlog/api.js";
import { BOARDS } from "matchlog/boards/index.js";
import { h } from "matchlog/dom.js";

function row(label, ...value) {
  return h("tr", {}, h("th", { scope: "row" }, label), h("td", {}, ...value));
}

/** The report laid out; `before` is the board before the event (an element), when there is one. */
export function disputeView(report, before = null) {
  const shown = (value) => (value === null || value === undefined || value === "" ? "—" : String(value));
  return h(
    "article",
    { class: "dispute", "data-seq": report.seq, "data-ruling": report.ruling },
    h("h1", {}, `seq ${report.seq} of ${report.game} match `, h("small", { class: "match-id" }, report.match_id)),
    h("p", { class: "said" }, report.said),
    h(
      "table",
      { class: "facts" },
      row("ruling", h("strong", { class: ["ruling", report.ruling] }, report.ruling)),
      row("rule", h("code", {}, shown(report.rule))),
      row("the rule says", shown(report.rule_says)),
      row("seat", report.seat === null ? "—" : `${report.seat} (${shown(report.seat_name)})`),
      row("was asked for", shown(report.decision)),
      row("event", h("code", { class: "event-json" }, JSON.stringify(report.event))),
    ),
    report.findings.length
      ? h(
          "section",
          { class: "findings" },
          h("h2", {}, "audit findings"),
          h("ul", {}, report.findings.map((finding) => h("li", { "data-rule": finding.rule }, h("code", {}, finding.rule), " ", finding.message))),
        )
      : h("p", { class: "clean" }, "the audit finds nothing wrong with this event"),
    h(
      "section",
      { class: "before" },
      h("h2", {}, "the state before"),
      before,
      h("pre", {}, report.before || "(this is the first event)"),
      report.before_as_seat && report.before_as_seat !== report.before
        ? [h("h3", {}, `as seat ${report.seat} saw it`), h("pre", {}, report.before_as_seat)]
        : null,
    ),
    h(
      "section",
      { class: "alternatives" },
      h("h2", {}, `legal alternatives (${report.alternatives_total})`),
      report.alternatives.length
        ? h("ol", {}, report.alternatives.map((alternative) => h("li", {}, alternative)))
        : h("p", {}, "none listed"),
      report.alternatives_total > report.alternatives.length
        ? h("p", {}, `… and ${report.alternatives_total - report.alternatives.length} more`)
        : null,
    ),
    h(
      "section",
      { class: "proof" },
      h("h2", {}, "hash proof"),
      h(
        "table",
        { class: "facts" },
        row("this event's hash", h("code", {}, shown(report.hash))),
        row("the previous hash", h("code", {}, shown(report.previous_hash))),
        row(`the head (seq ${report.head_seq})`, h("code", {}, shown(report.head_hash))),
        row("chain verified", h("strong", { "data-verified": report.chain_verified }, report.chain_verified ? "yes" : "NO")),
      ),
    ),
  );
}

/** The dispute page: `config.match` and `config.seq`. */
export async function mount(root, config) {
  const base = `/api/matches/${encodeURIComponent(config.match)}`;
  try {
    const report = await getJson(`${base}/audit`, { seq: config.seq });
    let before = null;
    if (report.seq > 0) {
      const [frame] = await getJson(`${base}/frames`, { start: report.seq - 1, stop: report.seq - 1 });
      before = BOARDS[frame.board.game]?.(frame.board, {}) ?? null;
    }
    const back = withToken(`/matches/${report.match_id}?seq=${report.seq}`);
    root.replaceChildren(h("p", {}, h("a", { href: back }, `← the match at seq ${report.seq}`)), disputeView(report, before));
  } catch (error) {
    root.replaceChildren(h("p", { class: "error", role: "alert" }, String(error)));
  }
}
