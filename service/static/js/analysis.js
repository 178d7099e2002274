// The analysis on the match page, after lichess's: the evaluation graph under the board (click a
// point to go there), the marks in the event list, the best move at a decision, each player's
// summary and the comments. Everything comes from the reader's view of the annotations
// (`/api/matches/{id}/annotations`, or an exported file's); these functions only draw it.

import { OVERLAYS } from "matchlog/boards/index.js";
import { h, s } from "matchlog/dom.js";

/** The glyph of a mark (gnubg's and lichess's names). */
export const GLYPHS = {
  doubtful: "?!",
  inaccuracy: "?!",
  bad: "?",
  mistake: "?",
  "very bad": "??",
  blunder: "??",
};

/** How bad a mark is, 1 to 3 (the graph's and the list's colours). */
const SEVERITY = { doubtful: 1, inaccuracy: 1, bad: 2, mistake: 2, "very bad": 3, blunder: 3 };
const SEAT_COLOURS = ["#1f5f8b", "#c0392b", "#2e7d32", "#8e44ad", "#d35400", "#546e7a"];
const WIDTH = 600;
const HEIGHT = 110;

/** The latest analysis's notes by seq: decisions, luck; and every comment. */
export function notesBySeq(analysis) {
  const found = new Map();
  if (!analysis) return found;
  const latest = analysis.analyser;
  for (const annotation of analysis.annotations) {
    const note = annotation.note;
    const kind = note.type;
    if (kind !== "annotation.comment" && annotation.author !== latest) continue;
    if (!found.has(annotation.seq)) found.set(annotation.seq, { decision: null, luck: null, comments: [] });
    const entry = found.get(annotation.seq);
    if (kind === "analysis.decision") entry.decision = note;
    else if (kind === "analysis.luck") entry.luck = note;
    else entry.comments.push({ ...note, author: annotation.author, at_us: annotation.at_us });
  }
  return found;
}

/** What the event list shows beside a line: the decision's glyph, a lucky roll, comments. */
export function lineMarks(notes, seq) {
  const entry = notes.get(seq);
  if (!entry) return [];
  const shown = [];
  const decision = entry.decision;
  if (decision && decision.mark) {
    const title = `${decision.mark}: best ${decision.best} (lost ${decision.loss.toFixed(3)} ${decision.unit})`;
    shown.push(
      h(
        "span",
        { class: ["glyph", `severity-${SEVERITY[decision.mark] ?? 1}`], title, "data-mark": decision.mark },
        GLYPHS[decision.mark] ?? "?",
      ),
    );
  }
  if (entry.luck && entry.luck.mark) {
    shown.push(
      h(
        "span",
        { class: "luck", title: `${entry.luck.mark}: ${entry.luck.luck.toFixed(3)}`, "data-luck": entry.luck.mark },
        entry.luck.luck > 0 ? "▲" : "▼",
      ),
    );
  }
  for (const comment of entry.comments) {
    shown.push(
      h(
        "span",
        { class: ["comment-mark", comment.ruling && "ruling"], title: `${comment.author}: ${comment.text}` },
        comment.ruling ? "§" : "✎",
        comment.mark ? ` ${comment.mark}` : "",
      ),
    );
  }
  return shown;
}

/** The decision the board at `seq` awaits or shows: the one whose play starts at seq + 1, or spans seq. */
export function decisionAt(notes, seq) {
  const next = notes.get(seq + 1)?.decision;
  if (next) return { decision: next, before: true };
  for (const [at, entry] of notes) {
    const decision = entry.decision;
    if (decision && at <= seq && seq <= (decision.last_seq ?? at)) return { decision, before: false };
  }
  return null;
}

/** The best move drawn over the board before a decision (where the game has a drawing of it),
 * with the board's drawing options (`side`: whose side it is drawn from). */
export function overlay(svg, frame, notes, options = {}) {
  const found = decisionAt(notes, frame.seq);
  if (!found || !found.before || !found.decision.steps.length) return;
  const draw = OVERLAYS[frame.board.game];
  if (draw) svg.append(draw(frame.board, found.decision.steps, found.decision.seat, options));
}

/** The line under the board: what the analysis says of the decision at hand. */
export function decisionText(notes, seq) {
  const found = decisionAt(notes, seq);
  if (!found) return null;
  const d = found.decision;
  const verdict = d.loss > 0 ? `best ${d.best} (${d.loss.toFixed(3)} ${d.unit} lost)` : "the best choice";
  return h(
    "p",
    { class: "decision", "data-seq": found.before ? seq + 1 : seq, "data-best": d.best },
    h("strong", {}, `seat ${d.seat} ${found.before ? "to decide" : "played"}: `),
    found.before ? `best ${d.best}` : `${d.played}${d.mark ? GLYPHS[d.mark] : ""}: ${verdict}`,
  );
}

/** The evaluation graph: each decision's value after it (a chance, or a share of the best), one
 * line a seat (backgammon: seat 0's chance of winning), its marks as dots; a click goes there. */
export function graphView(ctrl) {
  const analysis = ctrl.analysis;
  if (!analysis || !analysis.graph.length) return null;
  const last = Math.max(1, ctrl.last);
  const x = (seq) => (WIDTH * seq) / last;
  const y = (value) => 4 + (HEIGHT - 8) * (1 - Math.max(0, Math.min(1, value)));
  const bySeat = new Map();
  for (const [seq, seat, value, mark] of analysis.graph) {
    if (!bySeat.has(seat)) bySeat.set(seat, []);
    bySeat.get(seat).push({ seq, value, mark });
  }
  const oneLine = ctrl.info.game === "backgammon";
  const lines = oneLine ? [[0, analysis.graph.map(([seq, , value, mark]) => ({ seq, value, mark }))]] : [...bySeat];
  const nearest = (target) =>
    analysis.graph.reduce((best, point) => (Math.abs(point[0] - target) < Math.abs(best[0] - target) ? point : best))[0];
  const svg = s(
    "svg",
    {
      class: "graph",
      viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
      role: "img",
      "aria-label": "evaluation graph",
      "data-points": analysis.graph.length,
      onclick: (event) => {
        const box = svg.getBoundingClientRect();
        const seq = Math.round(((event.clientX - box.left) / box.width) * last);
        ctrl.jump(nearest(seq));
      },
    },
    s("rect", { x: 0, y: 0, width: WIDTH, height: HEIGHT, class: "graph-bg" }),
    s("line", { x1: 0, x2: WIDTH, y1: y(0.5), y2: y(0.5), class: "graph-mid" }),
    lines.map(([seat, points]) => {
      const path = points.map((p) => `${x(p.seq).toFixed(1)},${y(p.value).toFixed(1)}`).join(" ");
      const colour = oneLine ? "#333" : SEAT_COLOURS[seat % SEAT_COLOURS.length];
      return [
        oneLine
          ? s("polygon", {
              points: `0,${y(0.5)} ${path} ${x(points[points.length - 1].seq)},${y(0.5)}`,
              class: "graph-area",
            })
          : null,
        s("polyline", { points: path, fill: "none", stroke: colour, "stroke-width": 1.6, "data-seat": seat }),
      ];
    }),
    analysis.graph
      .filter(([, , , mark]) => mark)
      .map(([seq, seat, value, mark]) =>
        s("circle", {
          cx: x(seq),
          cy: y(value),
          r: 3 + SEVERITY[mark],
          class: ["graph-mark", `severity-${SEVERITY[mark]}`],
          "data-seq": seq,
          "data-seat": seat,
          "data-mark": mark,
          onclick: (event) => {
            event.stopPropagation();
            ctrl.jump(seq);
          },
        }),
      ),
    s("line", { x1: x(ctrl.seq), x2: x(ctrl.seq), y1: 0, y2: HEIGHT, class: "graph-now", "data-seq": ctrl.seq }),
  );
  return svg;
}

/** Each player's summary of the latest analysis. */
export function summariesView(ctrl) {
  const analysis = ctrl.analysis;
  if (!analysis || !analysis.summaries.length) return null;
  const number = (value, digits, scale = 1) => (value === null || value === undefined ? "–" : (value * scale).toFixed(digits));
  return h(
    "div",
    { class: "summaries" },
    h("h2", {}, "analysis ", h("small", {}, analysis.analyser ?? "")),
    h(
      "table",
      { class: "summary" },
      h(
        "tr",
        {},
        ["player", "decisions", "error rate", "accuracy", "marks", "luck", "luck-adjusted"].map((name) => h("th", {}, name)),
      ),
      analysis.summaries.map((summary) => {
        const equity = summary.unit === "equity";
        const marks = Object.entries(summary.marks)
          .map(([mark, count]) => `${count}${GLYPHS[mark] ?? mark}`)
          .join(" ");
        return h(
          "tr",
          { "data-seat": summary.seat },
          h("td", {}, summary.name),
          h("td", { class: "number" }, `${summary.unforced}/${summary.decisions}`),
          h(
            "td",
            { class: "number", title: equity ? "mEMG: thousandths of an equity point lost a decision" : summary.unit },
            `${number(summary.error_rate, equity ? 1 : 3, equity ? 1000 : 1)} ${equity ? "mEMG" : summary.unit}`,
          ),
          h("td", { class: "number" }, summary.accuracy === null ? "–" : `${summary.accuracy.toFixed(1)}%`),
          h("td", { class: "mark-counts" }, marks || "none"),
          h("td", { class: "number" }, number(summary.luck, 3)),
          h("td", { class: "number" }, number(summary.luck_adjusted, 3)),
        );
      }),
    ),
  );
}

/** The comments and rulings on the timeline, each a link to its seq. */
export function commentsView(ctrl, notes) {
  const comments = [];
  for (const [seq, entry] of notes) for (const comment of entry.comments) comments.push({ seq, ...comment });
  if (!comments.length) return null;
  comments.sort((a, b) => a.seq - b.seq || a.at_us - b.at_us);
  return h(
    "div",
    { class: "comments" },
    h("h2", {}, "comments"),
    h(
      "ol",
      { class: "comment-list" },
      comments.map((comment) =>
        h(
          "li",
          { class: ["comment", comment.ruling && "ruling"], "data-seq": comment.seq, onclick: () => ctrl.jump(comment.seq) },
          h("span", { class: "seq" }, `seq ${comment.seq}`),
          h("span", { class: "author" }, comment.ruling ? `ruling by ${comment.author}` : comment.author),
          h("span", { class: "text" }, comment.text),
          comment.mark ? h("span", { class: "glyph" }, comment.mark) : null,
        ),
      ),
    ),
  );
}
