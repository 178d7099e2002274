// Fish: hexagonal tiles with their fish, holes, and the penguins by colour, with each player's score.
// A tile at (row, column) sits half a tile lower than the row before; odd rows shift half a column
// right, so a tile's neighbours are N (row - 2), NE, SE, S (row + 2), SW and NW.

import { s } from "matchlog/dom.js";

const SIZE = 34; // a hexagon's radius
const HALF_HEIGHT = (Math.sqrt(3) / 2) * SIZE;
const COLOURS = { red: "#c0392b", white: "#f4f4f4", brown: "#8b5a2b", black: "#222222" };

function centre(row, column) {
  return { x: SIZE + column * 3 * SIZE + (row % 2) * 1.5 * SIZE + 4, y: HALF_HEIGHT * (row + 1) + 4 };
}

function hexagon(x, y) {
  const corners = [];
  for (let k = 0; k < 6; k += 1) {
    const angle = (Math.PI / 3) * k;
    corners.push(`${(x + (SIZE - 1.5) * Math.cos(angle)).toFixed(2)},${(y + (SIZE - 1.5) * Math.sin(angle)).toFixed(2)}`);
  }
  return corners.join(" ");
}

/** `count` small fish spread over a tile. */
function fishes(x, y, count) {
  const spots = [[0, 0], [-8, -8], [8, 8], [8, -8], [-8, 8]];
  const drawn = [];
  for (let i = 0; i < count; i += 1) {
    const [dx, dy] = count === 1 ? [0, 0] : spots[(i + 1) % 5];
    const fx = x + dx;
    const fy = y + dy;
    drawn.push(
      s("ellipse", { cx: fx, cy: fy, rx: 5, ry: 2.8, fill: "#1f5f8b" }),
      s("polygon", { points: `${fx + 4},${fy} ${fx + 8},${fy - 3} ${fx + 8},${fy + 3}`, fill: "#1f5f8b" }),
    );
  }
  return drawn;
}

function penguin(x, y, seat, colour) {
  const fill = COLOURS[colour] ?? colour;
  return s(
    "g",
    { class: "penguin-body" },
    s("ellipse", { cx: x, cy: y, rx: 11, ry: 14, fill, stroke: "#000", "stroke-width": 1.5 }),
    s("ellipse", { cx: x, cy: y + 3, rx: 6, ry: 8, fill: colour === "white" ? "#ddd" : "#fff" }),
    s("circle", { cx: x - 3, cy: y - 7, r: 1.5, fill: "#000" }),
    s("circle", { cx: x + 3, cy: y - 7, r: 1.5, fill: "#000" }),
    s("polygon", { points: `${x - 2},${y - 4} ${x + 2},${y - 4} ${x},${y - 1}`, fill: "#e8a317" }),
  );
}

/** The board of one frame as an <svg>. */
export function draw(board) {
  const rows = board.tiles.length;
  const columns = rows ? Math.max(...board.tiles.map((row) => row.length)) : 0;
  const width = Math.max(SIZE * (3 * columns + 1) + 8, 300);
  const top = HALF_HEIGHT * (rows + 1) + 16; // the scores go below the board
  const height = top + 26 * board.names.length + 30;
  const standing = new Map();
  board.penguins.forEach((placed, seat) => {
    for (const [row, column] of placed) standing.set(`${row},${column}`, seat);
  });
  const tiles = [];
  board.tiles.forEach((row, r) =>
    row.forEach((count, c) => {
      const { x, y } = centre(r, c);
      tiles.push(
        s(
          "g",
          { class: ["tile", count === 0 && "hole"], "data-row": r, "data-column": c, "data-fish": count },
          s("polygon", {
            points: hexagon(x, y),
            fill: count === 0 ? "none" : "#dfeef7",
            stroke: count === 0 ? "#9ab" : "#7aa",
            "stroke-dasharray": count === 0 ? "3 3" : null,
          }),
          standing.has(`${r},${c}`) ? null : fishes(x, y, count),
        ),
      );
    }),
  );
  const penguins = [];
  board.penguins.forEach((placed, seat) => {
    for (const [row, column] of placed) {
      const { x, y } = centre(row, column);
      penguins.push(
        s(
          "g",
          { class: "penguin", "data-seat": seat, "data-row": row, "data-column": column, "data-colour": board.colours[seat] },
          penguin(x, y, seat, board.colours[seat]),
        ),
      );
    }
  });
  const legend = board.names.map((name, seat) => {
    const y = top + 14 + seat * 26;
    const age = board.ages[seat] === null ? "" : `, age ${board.ages[seat]}`;
    return s(
      "g",
      { class: "score", "data-seat": seat, "data-score": board.scores[seat] },
      s("circle", { cx: 14, cy: y - 5, r: 8, fill: COLOURS[board.colours[seat]], stroke: "#000" }),
      s(
        "text",
        { x: 30, y, class: ["legend", board.removed.includes(seat) && "removed"] },
        `${name}: ${board.scores[seat]} fish${age}`,
        board.removed.includes(seat) ? " (kicked)" : "",
      ),
    );
  });
  return s(
    "svg",
    {
      class: "board fish",
      viewBox: `0 0 ${width} ${height}`,
      role: "img",
      "aria-label": "fish board",
      "data-game": "fish",
      "data-phase": board.phase,
    },
    tiles,
    penguins,
    legend,
    s("text", { x: 14, y: top + 14 + 26 * board.names.length, class: "label" }, `${board.phase} phase`),
  );
}

/** The best move of a decision over the board: an arrow from the penguin's tile to where it should
 * go (`steps`: [row, column, row, column]). */
export function bestMove(board, steps) {
  return s(
    "g",
    { class: "best-move", "data-steps": steps.map((step) => step.join(":")).join(",") },
    steps.map(([r1, c1, r2, c2]) => {
      const a = centre(r1, c1);
      const b = centre(r2, c2);
      const angle = Math.atan2(b.y - a.y, b.x - a.x);
      const head = [0.45, -0.45].map((turn) => `${b.x - 14 * Math.cos(angle + turn)},${b.y - 14 * Math.sin(angle + turn)}`);
      return s(
        "g",
        { class: "arrow" },
        s("line", { x1: a.x, y1: a.y, x2: b.x, y2: b.y, "stroke-width": 4 }),
        s("polygon", { points: `${b.x},${b.y} ${head[0]} ${head[1]}` }),
      );
    }),
  );
}
