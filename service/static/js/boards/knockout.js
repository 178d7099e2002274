// A knockout tournament: every entrant with how far it got, this round's tables (played ones
// ticked), and the games so far, each a link to its own match where the page can follow it.

import { s } from "matchlog/dom.js";

function standing(board, seat) {
  if (board.winners.includes(seat)) return "winner";
  if (board.removed.includes(seat)) return "removed";
  if (board.out_after[seat]) return `out after round ${board.out_after[seat]}`;
  return "in";
}

/** The board of one frame as an <svg>; `links.matchHref(id)` gives a game's page (or null). */
export function draw(board, links = {}) {
  const entrants = board.names.map((name, seat) =>
    s(
      "text",
      { x: 12, y: 44 + seat * 20, class: ["entrant", standing(board, seat)], "data-seat": seat, "data-standing": standing(board, seat) },
      `${name}: ${standing(board, seat)}`,
    ),
  );
  const tables = board.tables.map((seats, index) =>
    s(
      "text",
      { x: 260, y: 44 + index * 20, class: "table", "data-table": index, "data-played": String(index < board.played) },
      `${index < board.played ? "✓" : "·"} table ${index + 1}: ${seats.map((seat) => board.names[seat]).join(", ")}`,
    ),
  );
  const games = board.games.map((matchId, index) => {
    const href = links.matchHref ? links.matchHref(matchId) : null;
    const label = s("text", { x: 520, y: 44 + index * 20, class: href ? "game-link" : "label" }, `game ${index + 1}`);
    return href ? s("a", { href, "data-match": matchId }, label) : label;
  });
  const height = 60 + 20 * Math.max(board.names.length, board.tables.length, board.games.length);
  return s(
    "svg",
    { class: "board knockout", viewBox: `0 0 640 ${height}`, role: "img", "data-game": "knockout", "data-round": board.round },
    s("text", { x: 12, y: 20, class: "heading" }, `${board.plays} knockout · round ${board.round} · ${board.phase}`),
    entrants,
    tables,
    games,
  );
}
