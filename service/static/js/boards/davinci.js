// Da Vinci Code: each player's row of tiles in order, black and white; a tile turned up shows its
// number to everyone, a tile this reader knows but others do not shows it faintly, and a tile this
// reader may not see shows only its colour. Jokers show "–". The pile lies below.

import { s } from "matchlog/dom.js";

const TILE_W = 34;
const TILE_H = 48;
const GAP = 6;
const NAME_W = 130;
const ROW_H = 74;

function tile(x, y, face, attrs, small = false) {
  const width = small ? 18 : TILE_W;
  const height = small ? 26 : TILE_H;
  const black = face.colour === 0;
  const text = face.known ? (face.joker ? "–" : String(face.number)) : "";
  return s(
    "g",
    {
      class: ["tile", face.revealed && "revealed", face.known && !face.revealed && "secret"],
      "data-colour": face.colour,
      "data-revealed": String(face.revealed),
      "data-number": face.known && !face.joker ? face.number : null,
      "data-joker": face.known && face.joker ? "true" : null,
      ...attrs,
    },
    s("rect", {
      x,
      y,
      width,
      height,
      rx: 4,
      fill: black ? "#222" : "#f7f7f2",
      stroke: face.revealed ? "#d4a017" : "#777",
      "stroke-width": face.revealed ? 3 : 1,
      "stroke-dasharray": face.known && !face.revealed ? "4 2" : null,
    }),
    text
      ? s(
          "text",
          {
            x: x + width / 2,
            y: y + height / 2 + (small ? 4 : 7),
            "text-anchor": "middle",
            class: small ? "tile-small" : "tile-number",
            fill: black ? "#fff" : "#111",
            opacity: face.revealed ? 1 : 0.6,
          },
          text,
        )
      : null,
  );
}

/** The board of one frame as an <svg>. */
export function draw(board) {
  const playing = board.phase !== "over"; // nobody is on turn once the match is over
  const longest = Math.max(4, ...board.rows.map((row) => row.length));
  const width = NAME_W + longest * (TILE_W + GAP) + 20;
  const rows = board.rows.map((row, seat) => {
    const y = 16 + seat * ROW_H;
    const out = board.out.includes(seat);
    const left = board.removed.includes(seat);
    return s(
      "g",
      { class: ["row", playing && seat === board.turn && "on-turn"], "data-seat": seat, "data-tiles": row.length },
      s("text", { x: 8, y: y + 20, class: "name" }, board.names[seat]),
      s("text", { x: 8, y: y + 38, class: "label" }, out ? "out" : left ? "left" : playing && seat === board.turn ? "on turn" : ""),
      row.map((face, index) =>
        tile(NAME_W + index * (TILE_W + GAP), y, face, { "data-seat": seat, "data-index": index }),
      ),
      playing && seat === board.turn && board.drawn >= 0
        ? s("polygon", {
            class: "drawn",
            points: (() => {
              const x = NAME_W + board.drawn * (TILE_W + GAP) + TILE_W / 2;
              return `${x - 6},${y + TILE_H + 12} ${x + 6},${y + TILE_H + 12} ${x},${y + TILE_H + 4}`;
            })(),
            fill: "#c0392b",
          })
        : null,
    );
  });
  const pileY = 16 + board.rows.length * ROW_H + 10;
  const perLine = Math.floor((width - NAME_W) / 22);
  const pile = board.pile.map((face, index) =>
    tile(NAME_W + (index % perLine) * 22, pileY + Math.floor(index / perLine) * 32, face, { "data-pile-index": index }, true),
  );
  const pileLines = Math.max(1, Math.ceil(board.pile.length / perLine));
  const notesY = pileY + pileLines * 32 + 18;
  const last = board.last;
  const notes = [];
  if (board.pending.length) {
    // A drawn tile waits for its place: a joker, or (with hidden jokers) any tile; say "joker" only
    // where this reader can see that it is one.
    const jokers = board.pending.every(([, face]) => face.known && face.joker);
    const what = jokers ? "joker" : "tile";
    const who = board.pending.map(([seat]) => board.names[seat]).join(", ");
    notes.push(`${what}${board.pending.length > 1 ? "s" : ""} to place: ${who}`);
  }
  // What the borders say, once there is a tile that has one.
  const faces = [...board.rows.flat(), ...board.pile];
  const legend = [];
  if (faces.some((face) => face.revealed)) legend.push("gold border: turned up, every player sees it");
  if (faces.some((face) => face.known && !face.revealed)) legend.push("dashed border: hidden from the others, shown to this view");
  if (legend.length) notes.push(legend.join(" · "));
  if (last) {
    const said = last.number === null ? "a joker" : String(last.number);
    notes.push(
      `last guess: ${board.names[last.seat]} said ${board.names[last.target]}'s tile ${last.position} is ${said}: ` +
        (last.right ? "right" : "wrong"),
    );
  }
  return s(
    "svg",
    {
      class: "board davinci",
      viewBox: `0 0 ${width} ${notesY + notes.length * 20 + 4}`,
      role: "img",
      "aria-label": "da vinci code table",
      "data-game": "davinci",
      "data-phase": board.phase,
    },
    rows,
    s(
      "g",
      { class: "pile", "data-pile": board.pile.length },
      s("text", { x: 8, y: pileY + 18, class: "name" }, `pile: ${board.pile.length}`),
      pile,
    ),
    notes.map((note, index) => s("text", { x: 8, y: notesY + index * 20, class: "label" }, note)),
  );
}
