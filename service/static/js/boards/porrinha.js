// Porrinha: the players around a table with their chopsticks, the hands this reader may see (a
// closed fist otherwise), this round's guesses in the order they were made, and the last round
// with its hands shown.

import { s } from "matchlog/dom.js";

const WIDTH = 600;
const HEIGHT = 420;
const CX = 230;
const CY = 210;

function chopsticks(x, y, count) {
  const drawn = [];
  for (let i = 0; i < count; i += 1) {
    drawn.push(s("rect", { x: x + i * 8 - count * 4, y, width: 4, height: 30, rx: 2, fill: "#b07d3c", class: "chopstick" }));
  }
  return drawn;
}

function ordinal(n) {
  const tens = n % 100;
  const suffix = tens >= 10 && tens <= 20 ? "th" : { 1: "st", 2: "nd", 3: "rd" }[n % 10] ?? "th";
  return `${n}${suffix}`;
}

function player(board, seat, x, y) {
  const out = board.out.includes(seat);
  const removed = board.removed.includes(seat);
  const hand = board.hands[seat];
  const guess = board.guesses.find((made) => made.seat === seat);
  const playing = !out && !removed && board.order.includes(seat);
  return s(
    "g",
    {
      class: ["player", out && "out", removed && "removed"],
      "data-seat": seat,
      "data-chopsticks": board.chopsticks[seat],
      "data-hand": hand ?? null,
      "data-guess": guess ? (guess.guess ?? "invalid") : null,
    },
    s("text", { x, y: y - 30, "text-anchor": "middle", class: "name" }, board.names[seat]),
    chopsticks(x, y - 22, board.chopsticks[seat]),
    playing
      ? s(
          "g",
          { class: "hand" },
          s("rect", { x: x - 16, y: y + 14, width: 32, height: 26, rx: 10, fill: hand === null ? "#d9b48f" : "#fff2df", stroke: "#7a5230" }),
          s("text", { x, y: y + 32, "text-anchor": "middle", class: "hand-value" }, hand === null ? "?" : String(hand)),
        )
      : s("text", { x, y: y + 32, "text-anchor": "middle", class: "label" }, removed ? "removed" : out ? `out (${ordinal(board.out.indexOf(seat) + 1)})` : ""),
    guess
      ? s("text", { x, y: y + 56, "text-anchor": "middle", class: "guess" }, guess.guess === null ? "invalid guess" : `guessed ${guess.guess}`)
      : null,
  );
}

/** The board of one frame as an <svg>. */
export function draw(board) {
  const count = board.names.length;
  const seats = board.names.map((_, seat) => {
    const angle = -Math.PI / 2 + (2 * Math.PI * seat) / count;
    return player(board, seat, CX + 165 * Math.cos(angle), CY + 150 * Math.sin(angle));
  });
  const onTable = board.chopsticks.reduce((sum, sticks, seat) => sum + (board.out.includes(seat) || board.removed.includes(seat) ? 0 : sticks), 0);
  const guesses = board.guesses.map((made, index) =>
    s(
      "text",
      { x: 440, y: 70 + index * 20, class: "guess-line", "data-seat": made.seat, "data-guess": made.guess ?? "invalid" },
      `${index + 1}. ${board.names[made.seat]}: ${made.guess === null ? "invalid" : made.guess}`,
    ),
  );
  const last = board.last;
  const lastLine = last
    ? s(
        "text",
        { x: 20, y: HEIGHT - 12, class: "last-round", "data-last-hands": last.hands.map((hand) => hand ?? "").join(",") },
        "last round: ",
        last.hands.map((hand, seat) => (hand === null ? null : `${board.names[seat]} ${hand}`)).filter(Boolean).join(" + "),
        ` = ${last.total}; `,
        last.winner >= 0 ? `${board.names[last.winner]} guessed right` : "nobody guessed right",
      )
    : null;
  return s(
    "svg",
    {
      class: "board porrinha",
      viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
      role: "img",
      "aria-label": "porrinha table",
      "data-game": "porrinha",
      "data-round": board.round,
    },
    s("ellipse", { cx: CX, cy: CY, rx: 110, ry: 95, fill: "#2f6b3a", stroke: "#5b4636", "stroke-width": 6 }),
    s("text", { x: CX, y: CY - 6, "text-anchor": "middle", class: "table-text" }, `round ${board.round}`),
    s("text", { x: CX, y: CY + 14, "text-anchor": "middle", class: "table-text" }, `${onTable} chopsticks`),
    seats,
    s("text", { x: 440, y: 46, class: "heading" }, "guesses"),
    guesses.length ? guesses : s("text", { x: 440, y: 70, class: "label" }, "none yet"),
    board.order.length
      ? s("text", { x: 440, y: 96 + Math.max(1, guesses.length) * 20, class: "heading" }, "guessing order")
      : null,
    board.order.map((seat, index) =>
      s("text", { x: 440, y: 116 + (Math.max(1, guesses.length) + index) * 20, class: "label order", "data-seat": seat },
        `${index + 1}. ${board.names[seat]}`),
    ),
    lastLine,
  );
}
