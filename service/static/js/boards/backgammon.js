// Backgammon: the 24 points, the bar, the borne-off checkers, the dice and the pip counts, drawn
// from one seat's side (`side`): its home board at the bottom right, where it bears off, and every
// point labelled with the number that seat reads (1..24 from its home, as `replay` words its moves).
// Seat 0's side: pygammon's points 0..11 along the bottom from the right, 12..23 along the top from
// the left; seat 1's side is the same board turned top to bottom.

import { s } from "matchlog/dom.js";

const POINT = 36; // width of a point
const LEFT = 20; // x of the first point
const BAR = 36; // width of the bar
const TOP = 28; // y of the top points' base
const BOTTOM = 412; // y of the bottom points' base
const DEPTH = 160; // height of a point
const RADIUS = 16;
const TRAY = LEFT + 12 * POINT + BAR + 18; // x of the borne-off tray
const COLOURS = [
  { fill: "#efe6d2", stroke: "#5b4636", text: "#3a2a22" },
  { fill: "#3a2a22", stroke: "#000000", text: "#efe6d2" },
];
const PIPS = {
  1: [[0, 0]],
  2: [[-1, -1], [1, 1]],
  3: [[-1, -1], [0, 0], [1, 1]],
  4: [[-1, -1], [1, -1], [-1, 1], [1, 1]],
  5: [[-1, -1], [1, -1], [0, 0], [-1, 1], [1, 1]],
  6: [[-1, -1], [1, -1], [-1, 0], [1, 0], [-1, 1], [1, 1]],
};

/** What a resignation offers, by its value. */
const RESIGNS = { 1: "a single game", 2: "a gammon", 3: "a backgammon" };

/** Where a point is drawn from `side`: the x of its centre, and whether it hangs from the top. */
function place(point, side) {
  const top = (point >= 12) !== (side === 1);
  const column = point >= 12 ? point - 12 : 11 - point;
  return { x: LEFT + column * POINT + POINT / 2 + (column >= 6 ? BAR : 0), top };
}

function checker(x, y, seat, label) {
  const colour = COLOURS[seat];
  return [
    s("circle", { cx: x, cy: y, r: RADIUS - 1, fill: colour.fill, stroke: colour.stroke, "stroke-width": 1.5 }),
    label ? s("text", { x, y: y + 4, "text-anchor": "middle", class: "count", fill: colour.text }, label) : null,
  ];
}

/** A stack of `count` checkers from (x, y) going `step` a checker; five at most, then a number. */
function stack(x, y, step, count, seat) {
  const shown = Math.min(count, 5);
  const drawn = [];
  for (let i = 0; i < shown; i += 1) {
    drawn.push(checker(x, y + i * step, seat, i === shown - 1 && count > 5 ? String(count) : ""));
  }
  return drawn;
}

function point(index, value, side, label) {
  const { x, top } = place(index, side);
  const base = top ? TOP : BOTTOM;
  const tip = top ? TOP + DEPTH : BOTTOM - DEPTH;
  const count = Math.abs(value);
  const owner = value > 0 ? 0 : value < 0 ? 1 : null;
  return s(
    "g",
    { class: "point", "data-point": index, "data-label": label, "data-checkers": count, "data-owner": owner ?? "" },
    s("polygon", {
      points: `${x - POINT / 2 + 1},${base} ${x + POINT / 2 - 1},${base} ${x},${tip}`,
      fill: index % 2 ? "#b5651d" : "#e3c58f",
    }),
    s("text", { x, y: top ? TOP - 8 : BOTTOM + 16, "text-anchor": "middle", class: "label" }, String(label)),
    owner === null ? null : stack(x, top ? TOP + RADIUS : BOTTOM - RADIUS, top ? 2 * RADIUS : -2 * RADIUS, count, owner),
  );
}

function die(x, y, value, used) {
  const size = 26;
  return s(
    "g",
    { class: ["die", used && "used"], "data-value": value, "data-used": String(used), opacity: used ? 0.35 : 1 },
    s("rect", { x: x - size / 2, y: y - size / 2, width: size, height: size, rx: 5, fill: "#fff", stroke: "#333" }),
    PIPS[value]?.map(([dx, dy]) => s("circle", { cx: x + dx * 7, cy: y + dy * 7, r: 2.6, fill: "#222" })),
  );
}

/** The doubling cube beside the board: in the middle, or on its holder's side; offered, it shows
 * the value offered, on the doubler's side. */
function cube(board, below) {
  if (!board.cube_in_play) return null;
  const size = 30;
  const value = board.doubled ? board.cube * 2 : board.cube;
  const holder = board.doubled ? board.side : board.cube_owner;
  const middle = (TOP + BOTTOM) / 2;
  const y = holder < 0 ? middle : below(holder) ? BOTTOM - 40 : TOP + 40;
  const x = TRAY + 76; // right of the tray (the board is drawn wider for it)
  return s(
    "g",
    {
      class: ["cube", board.doubled && "offered"],
      "data-cube": board.cube,
      "data-owner": board.cube_owner,
      "data-offered": board.doubled ? value : "",
    },
    s("rect", {
      x: x - size / 2,
      y: y - size / 2,
      width: size,
      height: size,
      rx: 4,
      fill: "#fffbe8",
      stroke: board.doubled ? "#b00" : "#333",
      "stroke-width": board.doubled ? 2.5 : 1.5,
    }),
    // A cube in the middle shows 64, as on a real board.
    s("text", { x, y: y + 5, "text-anchor": "middle", class: "cube-value" }, String(holder < 0 ? 64 : value)),
  );
}

/** The board of one frame as an <svg>, drawn from `side`'s side (seat 0 unless told). */
export function draw(board, { side = 0 } = {}) {
  const middle = (TOP + BOTTOM) / 2;
  // The seat drawn from sits at the bottom: its bar stack, its tray and its numbers.
  const below = (seat) => seat === side;
  const barX = LEFT + 6 * POINT + BAR / 2;
  const dice = board.dice.map((value, index) => ({ value, used: board.played.includes(index) }));
  // The dice sit in the half of the board in front of the side that rolled them.
  const diceX = (board.side === 1 ? LEFT + 3 * POINT : LEFT + 6 * POINT + BAR + 3 * POINT) - (dice.length - 1) * 16;
  return s(
    "svg",
    {
      class: "board backgammon",
      viewBox: `0 0 ${TRAY + 60 + (board.cube_in_play ? 44 : 0)} 492`,
      role: "img",
      "aria-label": "backgammon board",
      "data-game": "backgammon",
      "data-side": side,
    },
    s("rect", { x: LEFT - 10, y: TOP - 22, width: 12 * POINT + BAR + 20, height: BOTTOM - TOP + 44, class: "frame" }),
    s("rect", { x: LEFT, y: TOP, width: 12 * POINT + BAR, height: BOTTOM - TOP, fill: "#2f6b3a" }),
    s("rect", { x: barX - BAR / 2, y: TOP, width: BAR, height: BOTTOM - TOP, fill: "#5b4636" }),
    board.points.map((value, index) => point(index, value, side, board.labels[side][index])),
    [0, 1].map((seat) =>
      s(
        "g",
        { class: "bar", "data-seat": seat, "data-checkers": board.bar[seat] },
        stack(barX, below(seat) ? middle + 2 * RADIUS : middle - 2 * RADIUS, below(seat) ? 2 * RADIUS : -2 * RADIUS,
          board.bar[seat], seat),
      ),
    ),
    s("rect", { x: TRAY - 4, y: TOP, width: 48, height: BOTTOM - TOP, class: "tray" }),
    cube(board, below),
    [0, 1].map((seat) => {
      const checkers = [];
      for (let i = 0; i < board.off[seat]; i += 1) {
        const y = below(seat) ? BOTTOM - 10 - i * 10 : TOP + 2 + i * 10;
        checkers.push(
          s("rect", { x: TRAY, y, width: 40, height: 8, rx: 2, fill: COLOURS[seat].fill, stroke: COLOURS[seat].stroke }),
        );
      }
      return s("g", { class: "off", "data-seat": seat, "data-checkers": board.off[seat] }, checkers);
    }),
    s(
      "g",
      { class: "dice", "data-dice": board.dice.join(","), "data-played": board.played.join(","), "data-side": board.side },
      dice.map(({ value, used }, index) => die(diceX + index * 32, middle, value, used)),
    ),
    [0, 1].map((seat) =>
      s(
        "g",
        { class: "legend", "data-seat": seat },
        s("circle", {
          cx: LEFT + 8,
          cy: 452 + seat * 22, // a line each: a long name and "off 15 · won" never run into the other seat's
          r: 7,
          fill: COLOURS[seat].fill,
          stroke: COLOURS[seat].stroke,
        }),
        s(
          "text",
          { x: LEFT + 20, y: 457 + seat * 22, class: "pips", "data-seat": seat, "data-pips": board.pips[seat] },
          `${board.names[seat]} · ${board.pips[seat]} pips · bar ${board.bar[seat]} · off ${board.off[seat]}`,
          board.winner === seat ? " · won" : "",
          board.removed.includes(seat) ? " · removed" : "",
          board.resigning?.[0] === seat ? ` · resigns ${RESIGNS[board.resigning[1]] ?? "?"}?` : "",
        ),
      ),
    ),
  );
}

/** Where an arrow of the best move starts or ends, on the board drawn from `side`: a point's tip,
 * the mover's bar stack, or its tray. */
function spot(index, seat, end, side) {
  const middle = (TOP + BOTTOM) / 2;
  const below = seat === side;
  if (index === null) {
    if (!end) return { x: LEFT + 6 * POINT + BAR / 2, y: below ? middle + 2 * RADIUS : middle - 2 * RADIUS };
    return { x: TRAY + 20, y: below ? BOTTOM - 30 : TOP + 30 };
  }
  const { x, top } = place(index, side);
  return { x, y: top ? TOP + DEPTH - 24 : BOTTOM - DEPTH + 24 };
}

/** The best move of a decision over the board drawn from `side`: an arrow a checker, from point to
 * point (`steps`: [from, to] point indices, null for the bar or off). */
export function bestMove(board, steps, seat, { side = 0 } = {}) {
  return s(
    "g",
    { class: "best-move", "data-steps": steps.map((step) => step.join(":")).join(",") },
    steps.map(([from, to], number) => {
      const a = spot(from, seat, false, side);
      const b = spot(to, seat, true, side);
      const angle = Math.atan2(b.y - a.y, b.x - a.x);
      const head = [0.45, -0.45].map((turn) => `${b.x - 12 * Math.cos(angle + turn)},${b.y - 12 * Math.sin(angle + turn)}`);
      const lift = (number % 2 ? 1 : -1) * 6;
      return s(
        "g",
        { class: "arrow" },
        s("line", { x1: a.x, y1: a.y + lift, x2: b.x, y2: b.y + lift, "stroke-width": 4 }),
        s("polygon", { points: `${b.x},${b.y + lift} ${head[0]} ${head[1]}` }),
      );
    }),
  );
}
