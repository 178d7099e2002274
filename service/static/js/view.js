// The match page's views: functions of the controller's state that return elements. The skeleton
// (controls, the slider) is built once so a drag or a focused button survives a redraw; the rest
// is drawn again from the state whenever it changes.

import { commentsView, decisionText, graphView, lineMarks, notesBySeq, overlay, summariesView } from "matchlog/analysis.js";
import { BOARDS } from "matchlog/boards/index.js";
import { SPEEDS } from "matchlog/ctrl.js";
import { disputeView } from "matchlog/dispute.js";
import { h, replace } from "matchlog/dom.js";

/** Event types that are rulings on what a player did: they stand out in the list. */
const RULINGS = new Set([
  "match.answer_rejected",
  "match.player_removed",
  "match.undone",
  "porrinha.hand_reset",
  "porrinha.guess_voided",
]);

export function isRuling(line) {
  if (RULINGS.has(line.type)) return true;
  return line.type === "match.ended" && (line.event.outcome.result === "forfeit" || line.event.reason !== "");
}

/** The name of a view in the seat selector. */
export function viewName(view, info) {
  if (view === null) return "whole record";
  if (view === -1) return "spectator";
  return `seat ${view}: ${info.players[view] ?? "?"}`;
}

function seatName(info, seat) {
  return info.players[seat] ?? `seat ${seat}`;
}

/** Who acts now, in words. */
export function turnText(ctrl) {
  const frame = ctrl.frame;
  if (!frame) return "";
  if (frame.outcome) {
    const winners = frame.outcome.winners.map((seat) => seatName(ctrl.info, seat)).join(" and ");
    return `over (${frame.outcome.result})` + (winners ? `: ${winners} won` : "");
  }
  if (!frame.turn) return "";
  const { seat, decision } = frame.turn;
  if (seat === -1) return `chance: the referee's ${decision}`;
  const what = decision === "turn" ? "" : ` (${decision.replaceAll("_", " ")})`;
  return `${seatName(ctrl.info, seat)} to act${what}`;
}

function head(ctrl) {
  const info = ctrl.info;
  const live = ctrl.live
    ? h(
        "span",
        {
          class: ["live", ctrl.following ? "following" : "paused"],
          "data-live": ctrl.following ? "following" : "paused",
          title: ctrl.following ? "following new events" : "paused: go to the last seq to follow again",
        },
        ctrl.following ? "● live" : "live (paused)",
      )
    : null;
  return h(
    "div",
    { class: "match-head" },
    h("h1", {}, `${info.game} `, h("small", { class: "match-id" }, info.match_id)),
    h("span", { class: ["status", info.status], "data-status": info.status }, info.status),
    live,
  );
}

function players(ctrl) {
  const frame = ctrl.frame;
  const info = ctrl.info;
  const acting = frame?.turn?.seat;
  return h(
    "ol",
    { class: "players", start: 0 },
    info.players.map((name, seat) =>
      h(
        "li",
        {
          class: ["player", acting === seat && "to-act", ctrl.view === seat && "me"],
          "data-seat": seat,
        },
        h("span", { class: "seat-number" }, `${seat}`),
        h("span", { class: "name" }, name),
        h("span", { class: "strategy" }, info.strategies[seat]),
        frame?.outcome ? h("span", { class: "place" }, `place ${frame.outcome.places[seat]}`) : null,
        acting === seat ? h("span", { class: "turn-mark", title: "to act" }, "◀") : null,
      ),
    ),
  );
}

/** The boards games from plugins ship (`matchlog/games/NAME.js`), imported the first time one is
 * shown: the game's draw function once loaded, null if it could not be, a promise meanwhile. */
const SHIPPED = new Map();

function shippedBoard(game, redraw) {
  if (!SHIPPED.has(game)) {
    const loading = import(`matchlog/games/${game}.js`).then(
      (module) => SHIPPED.set(game, module.draw ?? null),
      () => SHIPPED.set(game, null),
    );
    SHIPPED.set(game, loading.then(redraw));
  }
  return SHIPPED.get(game);
}

function board(ctrl, notes, redraw) {
  const frame = ctrl.frame;
  if (!frame) return h("p", { class: "loading" }, ctrl.error ? "" : "loading…");
  const game = frame.board.game;
  if (game === "text") {
    // A game that brings no drawing: its state as text, beside the event list.
    const text = h("pre", { class: "board text-board", "data-game": frame.board.name }, frame.board.text);
    text.setAttribute("data-seq", frame.seq);
    text.setAttribute("data-view", ctrl.view === null ? "all" : ctrl.view);
    return text;
  }
  let draw = BOARDS[game];
  if (!draw) {
    draw = shippedBoard(game, redraw);
    if (draw === null) return h("p", { class: "loading" }, `no drawing for ${game}`);
    if (typeof draw !== "function") return h("p", { class: "loading" }, "loading…");
  }
  const options = { matchHref: (id) => ctrl.source.matchHref(id), side: ctrl.drawnFrom };
  const svg = draw(frame.board, options);
  svg.setAttribute("data-seq", frame.seq);
  svg.setAttribute("data-view", ctrl.view === null ? "all" : ctrl.view);
  overlay(svg, frame, notes, options);
  return svg;
}

/** The lines as a reader sees them: a line that goes on the one before it (`joins`: a backgammon
 * turn's next checker) is shown with it, in runs of lines. */
export function runs(lines) {
  const found = [];
  for (const line of lines) {
    if (line.joins && found.length) found[found.length - 1].push(line);
    else found.push([line]);
  }
  return found;
}

function eventList(ctrl, notes) {
  const findings = new Map();
  for (const finding of ctrl.findings) {
    if (!findings.has(finding.seq)) findings.set(finding.seq, []);
    findings.get(finding.seq).push(finding);
  }
  return h(
    "ol",
    { class: "events", start: 0 },
    runs(ctrl.lines).map((run) => {
      // A run reads as its last line (which says the whole of it) and steps to where it ends.
      const line = run[run.length - 1];
      const found = run.flatMap((each) => findings.get(each.seq) ?? []);
      const seqs = run.map((each) => each.seq);
      return h(
        "li",
        {
          class: [
            "line",
            run.some(isRuling) && "ruling",
            line.undone_by !== null && "undone",
            found.length && "finding",
          ],
          "data-seq": line.seq,
          "data-seqs": seqs.join(" "),
          "data-type": line.type,
          title: line.undone_by !== null ? `taken back at seq ${line.undone_by}` : null,
          onclick: () => ctrl.jump(line.seq),
        },
        h("span", { class: "seq" }, run.length > 1 ? `${seqs[0]}–${line.seq}` : String(line.seq)),
        h("span", { class: "text" }, line.text),
        run.flatMap((each) => lineMarks(notes, each.seq)),
        found.map((finding) => findingLink(ctrl, finding)),
      );
    }),
  );
}

function findingLink(ctrl, finding) {
  const href = ctrl.source.disputeHref(finding.seq, ctrl.view);
  const label = `⚑ ${finding.rule}`;
  const title = finding.message ?? `audit finding at seq ${finding.seq}`;
  return href
    ? h("a", { class: "finding-link", href, title, onclick: (event) => event.stopPropagation() }, label)
    : h("span", { class: "finding-link", title }, label);
}

function marks(ctrl) {
  const last = Math.max(1, ctrl.last);
  const seen = new Set();
  return ctrl.findings
    .filter((finding) => !seen.has(finding.seq) && seen.add(finding.seq))
    .map((finding) => {
      const href = ctrl.source.disputeHref(finding.seq, ctrl.view);
      return h(
        href ? "a" : "span",
        {
          class: "mark",
          href,
          style: `left: ${(100 * finding.seq) / last}%`,
          title: `seq ${finding.seq}: ${finding.rule}`,
          "data-seq": finding.seq,
        },
        "⚑",
      );
    });
}

/** Build the page for `ctrl` inside `root`; returns the function that draws it again. */
export function mountMatch(root, ctrl) {
  const button = (label, title, action, name) =>
    h("button", { type: "button", title, "data-action": name, onclick: action }, label);
  const slider = h("input", {
    type: "range",
    class: "slider",
    min: 0,
    max: 0,
    value: 0,
    "aria-label": "seq",
    oninput: (event) => ctrl.jump(Number(event.target.value)),
  });
  const play = button("play", "autoplay (space)", () => ctrl.togglePlay(), "play");
  const speed = h(
    "select",
    {
      class: "speed",
      title: "autoplay speed",
      onchange: (event) => {
        event.target.blur(); // the arrow keys step again, rather than change the speed
        ctrl.setSpeed(Number(event.target.value));
      },
    },
    SPEEDS.map(([label, ms]) => h("option", { value: ms, selected: ms === ctrl.speed }, label)),
  );
  const seats = h("select", {
    class: "seats",
    title: "see the match as",
    onchange: (event) => {
      event.target.blur();
      ctrl.setView(event.target.value === "all" ? null : Number(event.target.value));
    },
  });
  const position = h("span", { class: "position" });
  // Backgammon's board turns round to either side (`?side=` in the address).
  const flip = button("⇅ flip", "draw the board from the other side", () => ctrl.flip(), "flip");
  flip.hidden = true;
  const turn = h("p", { class: "turn" });
  const parts = {
    head: h("header", {}),
    players: h("div", { class: "players-box" }),
    board: h("div", { class: "board-box" }),
    marks: h("div", { class: "marks" }),
    decision: h("div", { class: "decision-box" }),
    graph: h("div", { class: "graph-box" }),
    summaries: h("div", { class: "summaries-box" }),
    comments: h("div", { class: "comments-box" }),
    events: h("div", { class: "events-box" }),
    error: h("p", { class: "error", role: "alert" }),
  };
  const dialog = h("dialog", { class: "dispute-dialog" });
  root.replaceChildren(
    h(
      "div",
      { class: "match" },
      parts.head,
      parts.error,
      h(
        "div",
        { class: "layout" },
        h(
          "section",
          { class: "stage" },
          parts.players,
          turn,
          parts.board,
          parts.decision,
          h(
            "div",
            { class: "controls" },
            button("|◀", "first (↑)", () => ctrl.first(), "first"),
            button("◀", "back (←)", () => ctrl.back(), "back"),
            play,
            button("▶", "forward (→)", () => ctrl.forward(), "forward"),
            button("▶|", "last (↓)", () => ctrl.end(), "last"),
            position,
            flip,
            speed,
            h("label", {}, "view ", seats),
          ),
          h("div", { class: "timeline" }, slider, parts.marks),
          parts.graph,
          parts.summaries,
        ),
        h("aside", {}, parts.comments, h("h2", {}, "events"), parts.events),
      ),
      dialog,
    ),
  );

  document.addEventListener("keydown", (event) => {
    if (event.target.closest?.("input, select, textarea") || event.altKey || event.ctrlKey || event.metaKey) return;
    const keys = {
      ArrowLeft: () => ctrl.back(),
      ArrowRight: () => ctrl.forward(),
      ArrowUp: () => ctrl.first(),
      Home: () => ctrl.first(),
      ArrowDown: () => ctrl.end(),
      End: () => ctrl.end(),
      " ": () => ctrl.togglePlay(),
    };
    if (keys[event.key]) {
      event.preventDefault();
      keys[event.key]();
    }
  });

  const showDispute = () => {
    const match = /^#dispute-(\d+)$/.exec(location.hash);
    const report = match && ctrl.source.dispute ? ctrl.source.dispute(Number(match[1]), ctrl.view) : null;
    if (!report) return;
    const close = h("button", { type: "button", class: "close", onclick: () => dialog.close() }, "close");
    replace(dialog, h("div", {}, close, disputeView(report)));
    if (!dialog.open) dialog.showModal();
  };
  window.addEventListener("hashchange", showDispute);
  dialog.addEventListener("close", () => {
    try {
      history.replaceState(null, "", location.pathname + location.search);
    } catch (error) {
      // The address keeps its #dispute; closing works all the same.
    }
  });
  let disputeOpened = false;

  let listKey = null;
  let marksKey = null;
  let seatsKey = null;
  let current = null;
  let shownSeq = null;
  let shownFrame = null;
  let shownAnalysis = null;
  let notes = new Map();
  let shownSide = null;

  const update = () => {
    if (ctrl.error) parts.error.textContent = String(ctrl.error);
    else parts.error.textContent = "";
    if (!ctrl.info) return;
    replace(parts.head, head(ctrl));
    const analysisChanged = shownAnalysis !== ctrl.analysis;
    if (analysisChanged) {
      shownAnalysis = ctrl.analysis;
      notes = notesBySeq(ctrl.analysis);
      replace(parts.summaries, summariesView(ctrl));
      replace(parts.comments, commentsView(ctrl, notes));
    }
    flip.hidden = ctrl.info.game !== "backgammon";
    if (shownFrame !== ctrl.frame || shownSeq !== ctrl.seq || shownSide !== ctrl.drawnFrom || analysisChanged) {
      shownFrame = ctrl.frame;
      shownSeq = ctrl.seq;
      shownSide = ctrl.drawnFrom;
      replace(parts.players, players(ctrl));
      replace(
        parts.board,
        board(ctrl, notes, () => {
          shownFrame = null; // draw again, now the game's board module is here
          update();
        }),
      );
      replace(parts.decision, decisionText(notes, ctrl.seq));
      replace(parts.graph, graphView(ctrl));
      turn.textContent = turnText(ctrl);
    }
    const viewKey = `${ctrl.generation}:${ctrl.views.join(",")}`;
    if (seatsKey !== viewKey) {
      seatsKey = viewKey;
      seats.replaceChildren(
        ...ctrl.views.map((view) =>
          h(
            "option",
            { value: view === null ? "all" : view, selected: view === ctrl.view },
            viewName(view, ctrl.info),
          ),
        ),
      );
    }
    slider.max = Math.max(0, ctrl.last);
    slider.value = ctrl.seq;
    position.textContent = ctrl.last >= 0 ? `seq ${ctrl.seq} / ${ctrl.last}` : "";
    play.textContent = ctrl.playing ? "pause" : "play";
    play.setAttribute("aria-pressed", ctrl.playing);
    speed.value = ctrl.speed;
    const findingsKey = ctrl.findings.map((finding) => finding.seq).join(",");
    const newList = `${ctrl.generation}:${ctrl.lines.length}:${findingsKey}:${ctrl.analysis?.annotations.length ?? -1}`;
    if (listKey !== newList) {
      listKey = newList;
      replace(parts.events, eventList(ctrl, notes));
      current = null;
    }
    const newMarks = `${ctrl.last}:${findingsKey}`;
    if (marksKey !== newMarks) {
      marksKey = newMarks;
      parts.marks.replaceChildren(...marks(ctrl));
    }
    const item = parts.events.querySelector(`li[data-seqs~="${ctrl.seq}"]`);
    if (item !== current) {
      current?.classList.remove("current");
      current = item;
      if (item) {
        item.classList.add("current");
        const box = parts.events;
        if (item.offsetTop < box.scrollTop || item.offsetTop + item.offsetHeight > box.scrollTop + box.clientHeight) {
          box.scrollTop = item.offsetTop - box.clientHeight / 2;
        }
      }
    }
    if (!disputeOpened && ctrl.lines.length) {
      disputeOpened = true;
      showDispute();
    }
  };
  return update;
}
