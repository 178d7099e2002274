// The leaderboard: `matchlog ratings` as a table (Weng-Lin μ, σ, μ - 3σ, provisional marked) and a
// chart of each player's Bradley-Terry Elo with its 95% interval, relative to its anchor player.

import { getJson } from "matchlog/api.js";
import { h, s } from "matchlog/dom.js";

const LABEL_W = 230;
const PLOT_W = 420;
const ROW_H = 22;

const fixed = (value, digits = 1) => (value === null || value === undefined ? "—" : Number(value).toFixed(digits));
const signed = (value) => (value === null || value === undefined ? "—" : `${value >= 0 ? "+" : ""}${Number(value).toFixed(0)}`);

/** Each rated player's Elo as a dot on its 95% interval, on one scale; the anchor's line at 0. */
export function eloChart(ratings) {
  const rated = ratings.filter((r) => r.elo !== null);
  if (!rated.length) return h("p", { class: "empty" }, "nobody has met anybody yet: no Elo to draw");
  const low = Math.min(0, ...rated.map((r) => r.elo_low));
  const high = Math.max(0, ...rated.map((r) => r.elo_high));
  const span = high - low || 1;
  const x = (value) => LABEL_W + ((value - low) / span) * PLOT_W;
  const height = 34 + rated.length * ROW_H;
  const rows = rated.map((r, index) => {
    const y = 20 + index * ROW_H;
    return s(
      "g",
      {
        class: "rating",
        "data-game": r.game,
        "data-player": r.player,
        "data-elo": r.elo,
        "data-low": r.elo_low,
        "data-high": r.elo_high,
      },
      s("text", { x: LABEL_W - 8, y: y + 4, "text-anchor": "end" }, `${r.game}: ${r.player}`),
      s("line", { x1: x(r.elo_low), x2: x(r.elo_high), y1: y, y2: y, class: "interval" }),
      s("circle", { cx: x(r.elo), cy: y, r: 4.5, class: "dot" }),
      s("text", { x: LABEL_W + PLOT_W + 8, y: y + 4, class: "label" }, `${signed(r.elo)} (${signed(r.elo_low)} to ${signed(r.elo_high)})`),
    );
  });
  const zero = s("line", { x1: x(0), x2: x(0), y1: 8, y2: height - 18, class: "fair" });
  const ticks = [...new Set([low, 0, high])].map((tick) =>
    s("text", { x: x(tick), y: height - 4, "text-anchor": "middle", class: "label" }, signed(tick)),
  );
  return s("svg", { class: "chart ratings", viewBox: `0 0 ${LABEL_W + PLOT_W + 150} ${height}`, role: "img" }, zero, ticks, rows);
}

function board(ratings) {
  const columns = [
    ["game", (r) => r.game],
    ["player", (r) => r.player + (r.provisional ? " (provisional)" : "")],
    ["strategy", (r) => r.strategies.join(", ")],
    ["matches", (r) => String(r.matches)],
    ["wins", (r) => String(r.wins)],
    ["draws", (r) => String(r.draws)],
    ["losses", (r) => String(r.losses)],
    ["μ", (r) => fixed(r.mu)],
    ["σ", (r) => fixed(r.sigma)],
    ["μ − 3σ", (r) => fixed(r.conservative)],
    ["Elo (95%)", (r) => (r.elo === null ? "—" : `${signed(r.elo)} (${signed(r.elo_low)} to ${signed(r.elo_high)}) vs ${r.anchor}`)],
  ];
  return h(
    "table",
    { class: "leaderboard" },
    h("thead", {}, h("tr", {}, columns.map(([name]) => h("th", {}, name)))),
    h(
      "tbody",
      {},
      ratings.map((r) =>
        h("tr", { class: r.provisional ? "provisional" : "", "data-player": r.player }, columns.map(([, cell]) => h("td", {}, cell(r)))),
      ),
    ),
  );
}

/** The ratings page: `config.games` names the games there are. */
export async function mount(root, config) {
  const params = new URLSearchParams(location.search);
  const chosen = { game: params.get("game") ?? "", anchor: params.get("anchor") ?? "" };
  const go = (changes) => {
    const next = new URLSearchParams(location.search);
    for (const [name, value] of Object.entries(changes)) {
      if (value) next.set(name, value);
      else next.delete(name);
    }
    location.search = next.toString();
  };
  const filters = h(
    "form",
    { class: "filters", onsubmit: (event) => event.preventDefault() },
    h(
      "label",
      {},
      "game ",
      h(
        "select",
        { name: "game", onchange: (event) => go({ game: event.target.value }) },
        [["", "every game"], ...config.games.map((game) => [game, game])].map(([value, label]) =>
          h("option", { value, selected: value === chosen.game }, label),
        ),
      ),
    ),
  );
  const body = h("div", {}, h("p", { class: "loading" }, "loading…"));
  root.replaceChildren(h("h1", {}, "ratings"), filters, body);
  let table;
  try {
    table = await getJson("/api/ratings", { game: chosen.game, anchor: chosen.anchor });
  } catch (error) {
    body.replaceChildren(h("p", { class: "error", role: "alert" }, String(error)));
    return;
  }
  if (!table.ratings.length) {
    body.replaceChildren(h("p", { class: "empty" }, "no ended match yet: nobody is rated"));
    return;
  }
  body.replaceChildren(
    h("p", {}, `${table.matches} ended matches; provisional while σ > ${table.provisional_sigma}.`),
    board(table.ratings),
    h("h2", {}, "Elo with its 95% interval (Bradley–Terry, against the anchor at 0)"),
    eloChart(table.ratings),
  );
}
