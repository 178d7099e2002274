// The statistics page: `matchlog stats` as tables and charts drawn here in SVG: win rates with
// their 95% intervals, win rates by seat (who moves first), and dice faces against fair dice.

import { getJson } from "matchlog/api.js";
import { h, s } from "matchlog/dom.js";

const LABEL_W = 230; // at least; wider for long names, up to LABEL_MAX
const LABEL_MAX = 480;
const CHAR_W = 7.5; // about, at the chart's font size, in the chart's units
const PLOT_W = 360;
const ROW_H = 22;

/** `text` cut to `chars` characters (with "…"), and a <title> that keeps it whole for a pointer. */
function fitted(text, chars) {
  const shown = text.length > chars ? `${text.slice(0, chars - 1)}…` : text;
  return [s("title", {}, text), shown];
}

function rateLabel(rate) {
  return `${rate.game}: ${rate.subject}${rate.player && rate.player !== rate.subject ? ` (${rate.player})` : ""}`;
}

function percent(value) {
  return `${(100 * value).toFixed(1)}%`;
}

/** Win rates as dots with their intervals; `fair(rate)` is where a rate would sit by chance. */
export function rateChart(rates, fair = () => null) {
  const height = 30 + rates.length * ROW_H;
  // Room for the longest label (a long name is never cut at the edge), cut with "…" beyond LABEL_MAX.
  const longest = Math.max(0, ...rates.map((rate) => rateLabel(rate).length));
  const labelW = Math.min(LABEL_MAX, Math.max(LABEL_W, longest * CHAR_W + 16));
  const x = (value) => labelW + value * PLOT_W;
  const grid = [0, 0.25, 0.5, 0.75, 1].map((tick) => [
    s("line", { x1: x(tick), x2: x(tick), y1: 10, y2: height - 18, class: "grid" }),
    s("text", { x: x(tick), y: height - 4, "text-anchor": "middle", class: "label tick", "data-tick": tick }, percent(tick)),
  ]);
  const rows = rates.map((rate, index) => {
    const y = 20 + index * ROW_H;
    const chance = fair(rate);
    return s(
      "g",
      {
        class: "rate",
        "data-game": rate.game,
        "data-subject": rate.subject,
        "data-rate": rate.win_rate,
        "data-low": rate.win_low,
        "data-high": rate.win_high,
        "data-matches": rate.matches,
      },
      s("text", { x: labelW - 8, y: y + 4, "text-anchor": "end", class: "rate-label" }, fitted(rateLabel(rate), Math.floor((labelW - 16) / CHAR_W))),
      chance === null ? null : s("line", { x1: x(chance), x2: x(chance), y1: y - 8, y2: y + 8, class: "fair" }),
      s("line", { x1: x(rate.win_low), x2: x(rate.win_high), y1: y, y2: y, class: "interval" }),
      s("circle", { cx: x(rate.win_rate), cy: y, r: 4.5, class: "dot" }),
      s("text", { x: labelW + PLOT_W + 8, y: y + 4, class: "label" }, `${rate.wins}/${rate.matches}`),
    );
  });
  return s("svg", { class: "chart rates", viewBox: `0 0 ${labelW + PLOT_W + 70} ${height}`, role: "img" }, grid, rows);
}

/** Die faces as shares of the rolls, one small chart per player, against a fair die's sixth. */
export function diceChart(dice) {
  const width = 200;
  const height = 150;
  const charts = dice.filter((fairness) => fairness.rolls > 0).map((fairness, index) => {
    const left = (index % 3) * (width + 20);
    const top = Math.floor(index / 3) * (height + 20);
    const most = Math.max(1 / 6, ...fairness.counts.map((count) => count / fairness.rolls)) * 1.15;
    const y = (share) => top + 110 - (share / most) * 90;
    return s(
      "g",
      { class: "dice-chart", "data-game": fairness.game, "data-subject": fairness.subject, "data-p": fairness.p_value },
      s("text", { x: left + 4, y: top + 12, class: "label dice-title" }, fitted(`${fairness.game}: ${fairness.subject}`, 30)),
      fairness.counts.map((count, face) =>
        s(
          "g",
          { class: "face", "data-face": face + 1, "data-count": count },
          s("rect", {
            x: left + 14 + face * 30,
            y: y(count / fairness.rolls),
            width: 22,
            height: top + 110 - y(count / fairness.rolls),
            class: "bar",
          }),
          s("text", { x: left + 25 + face * 30, y: top + 126, "text-anchor": "middle", class: "label" }, String(face + 1)),
        ),
      ),
      s("line", { x1: left + 10, x2: left + 196, y1: y(1 / 6), y2: y(1 / 6), class: "fair" }),
      s("text", { x: left + 4, y: top + 144, class: "label" }, `${fairness.rolls} dice · p = ${fairness.p_value.toFixed(3)}`),
    );
  });
  const rows = Math.ceil(charts.length / 3);
  return s("svg", { class: "chart dice", viewBox: `0 0 ${3 * (width + 20)} ${Math.max(1, rows) * (height + 20)}`, role: "img" }, charts);
}

function table(columns, rows) {
  return h(
    "table",
    { class: "numbers" },
    h("thead", {}, h("tr", {}, columns.map(([label]) => h("th", {}, label)))),
    h("tbody", {}, rows.map((row) => h("tr", {}, columns.map(([, cell]) => h("td", {}, cell(row)))))),
  );
}

const number = (value, digits = 1) => (value === null || value === undefined ? "—" : Number(value).toFixed(digits));

/** The statistics page: `config.games` names the games there are. */
export async function mount(root, config) {
  const params = new URLSearchParams(location.search);
  const chosen = { game: params.get("game") ?? "", by: params.get("by") ?? "player", since: params.get("since") ?? "" };
  const go = (changes) => {
    const next = new URLSearchParams(location.search);
    for (const [name, value] of Object.entries(changes)) {
      if (value) next.set(name, value);
      else next.delete(name);
    }
    location.search = next.toString();
  };
  const select = (name, options) =>
    h(
      "select",
      { name, onchange: (event) => go({ [name]: event.target.value }) },
      options.map(([value, label]) => h("option", { value, selected: value === chosen[name] }, label)),
    );
  const filters = h(
    "form",
    { class: "filters", onsubmit: (event) => event.preventDefault() },
    h("label", {}, "game ", select("game", [["", "every game"], ...config.games.map((game) => [game, game])])),
    h("label", {}, "by ", select("by", [["player", "player"], ["seat", "seat"]])),
    h("label", {}, "since ", h("input", { type: "date", name: "since", value: chosen.since, onchange: (event) => go({ since: event.target.value }) })),
  );
  const body = h("div", {}, h("p", { class: "loading" }, "loading…"));
  root.replaceChildren(h("h1", {}, "statistics"), filters, body);
  let result;
  try {
    result = await getJson("/api/stats", { game: chosen.game, by: chosen.by, since: chosen.since });
  } catch (error) {
    body.replaceChildren(h("p", { class: "error", role: "alert" }, String(error)));
    return;
  }
  const seatsOf = new Map();
  for (const rate of result.by === "seat" ? result.rates : result.seats) {
    seatsOf.set(rate.game, (seatsOf.get(rate.game) ?? 0) + 1);
  }
  const bySeat = result.by === "seat" ? result.rates : result.seats;
  const sections = [
    h("h2", {}, "matches"),
    table(
      [
        ["game", (g) => g.game],
        ["matches", (g) => String(g.matches)],
        ["finished", (g) => String(g.finished)],
        ["running", (g) => String(g.running)],
        ["abandoned", (g) => String(g.abandoned)],
        ["mean turns", (g) => number(g.mean_turns)],
        ["median turns", (g) => number(g.median_turns)],
        ["mean seconds", (g) => number(g.mean_seconds, 2)],
        ["rejected", (g) => `${g.rejected} (${percent(g.rejection_rate)})`],
        ["removed", (g) => `${g.removed} (${percent(g.removal_rate)})`],
      ],
      result.games,
    ),
  ];
  if (result.by === "player" && result.rates.length) {
    sections.push(h("h2", {}, "win rates by player (95% intervals)"), rateChart(result.rates));
  }
  if (bySeat.length) {
    sections.push(
      h("h2", {}, "win rates by seat: who moves first (the tick: one in as many seats)"),
      rateChart(bySeat, (rate) => 1 / (seatsOf.get(rate.game) || 1)),
    );
  }
  if (result.dice.length) {
    sections.push(h("h2", {}, "dice fairness (the line: a fair die's sixth; small p: suspicious)"), diceChart(result.dice));
  }
  if (result.figures.length) {
    sections.push(
      h("h2", {}, "each game's own figures"),
      table(
        [
          ["game", (f) => f.game],
          ["who", (f) => f.subject],
          ["figure", (f) => f.figure.replaceAll("_", " ")],
          ["value", (f) => number(f.value, 3)],
          ["over", (f) => String(f.count)],
        ],
        result.figures,
      ),
    );
  }
  body.replaceChildren(...sections);
}
