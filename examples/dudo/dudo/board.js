// Dudo: each player's cup, its dice once this reader may see them (a "?" while the cup is down),
// the last bid, whose turn it is, and once someone doubts, how many dice show the bid's face.
// matchlog's viewer imports this module and calls draw(model) for every frame of a Dudo match.

const NS = "http://www.w3.org/2000/svg";

function s(tag, attrs, ...children) {
  const node = document.createElementNS(NS, tag);
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value !== null && value !== undefined && value !== false) node.setAttribute(name, String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return node;
}

const PIPS = { 1: [[1, 1]], 2: [[0, 0], [2, 2]], 3: [[0, 0], [1, 1], [2, 2]], 4: [[0, 0], [0, 2], [2, 0], [2, 2]],
  5: [[0, 0], [0, 2], [1, 1], [2, 0], [2, 2]], 6: [[0, 0], [0, 1], [0, 2], [2, 0], [2, 1], [2, 2]] };

function die(x, y, face, marked) {
  const box = s("rect", { x, y, width: 40, height: 40, rx: 7, fill: face === null ? "#8a6a4a" : "#fffdf6",
    stroke: marked ? "#c0392b" : "#333", "stroke-width": marked ? 3 : 1.5 });
  if (face === null) {
    return s("g", { class: "die hidden" }, box, s("text", { x: x + 20, y: y + 27, "text-anchor": "middle", fill: "#fff" }, "?"));
  }
  const pips = PIPS[face].map(([row, col]) => s("circle", { cx: x + 9 + col * 11, cy: y + 9 + row * 11, r: 3.6, fill: "#222" }));
  return s("g", { class: "die", "data-face": face }, box, ...pips);
}

/** The board of one frame as an <svg>. */
export function draw(board) {
  const rows = board.names.map((name, seat) => {
    const y = 30 + seat * 70;
    const face = board.counted !== null && board.bid ? board.bid[2] : null;
    const label = `${name}${board.removed.includes(seat) ? " (removed)" : ""}${board.turn === seat ? " ◀ to bid" : ""}`;
    return s(
      "g",
      { class: "player", "data-seat": seat },
      s("text", { x: 16, y: y + 26, class: "name" }, label),
      board.dice[seat].map((value, index) => die(200 + index * 50, y, value, face !== null && value === face)),
    );
  });
  const height = 60 + board.names.length * 70;
  const bid = board.bid
    ? `bid: ${board.bid[1]} × ${board.bid[2]} by ${board.names[board.bid[0]]}`
    : "no bid yet";
  const result = board.counted !== null
    ? ` · ${board.names[board.doubter]} says dudo: ${board.counted} show a ${board.bid[2]}`
    : "";
  return s(
    "svg",
    { class: "board dudo", viewBox: `0 0 520 ${height}`, role: "img", "aria-label": "dudo table", "data-game": "dudo" },
    s("rect", { x: 0, y: 0, width: 520, height, fill: "#2e6b3f", rx: 12 }),
    rows,
    s("text", { x: 16, y: height - 16, class: "bid", fill: "#fff" }, bid + result),
  );
}
