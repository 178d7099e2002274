// The list of matches: newest first, filtered by game, player and status, a page at a time, each
// linked to its viewer. The filters live in the address, so a list can be shared too.

import { getJson, withToken } from "matchlog/api.js";
import { h, when } from "matchlog/dom.js";

const PAGE = 25;

function result(info) {
  const outcome = info.outcome;
  if (!outcome) return "";
  const winners = outcome.winners.map((seat) => info.players[seat]).join(", ");
  return winners ? `${winners} (${outcome.result})` : outcome.result;
}

function table(matches) {
  return h(
    "table",
    { class: "matches" },
    h("thead", {}, h("tr", {}, ["match", "started", "game", "players", "status", "events", "result"].map((name) => h("th", {}, name)))),
    h(
      "tbody",
      {},
      matches.map((info) =>
        h(
          "tr",
          { "data-match": info.match_id, "data-game": info.game, "data-status": info.status },
          h("td", {}, h("a", { href: withToken(`/matches/${info.match_id}`) }, h("code", {}, info.match_id))),
          h("td", {}, when(info.created_us)),
          h("td", {}, info.game),
          h("td", {}, info.players.map((name, seat) => `${name} (${info.strategies[seat]})`).join(", ")),
          h("td", {}, h("span", { class: ["status", info.status] }, info.status)),
          h("td", { class: "number" }, String(info.last_seq + 1)),
          h("td", {}, result(info)),
        ),
      ),
    ),
  );
}

/** The list page: `config.games` names the games there are. */
export async function mount(root, config) {
  const params = new URLSearchParams(location.search);
  const filters = {
    game: params.get("game") ?? "",
    player: params.get("player") ?? "",
    status: params.get("status") ?? "",
  };
  const page = Math.max(0, Number.parseInt(params.get("page") ?? "0", 10) || 0);
  const go = (changes) => {
    const next = new URLSearchParams(location.search);
    for (const [name, value] of Object.entries(changes)) {
      if (value === "" || value === 0) next.delete(name);
      else next.set(name, value);
    }
    location.search = next.toString();
  };
  const select = (name, options) =>
    h(
      "select",
      { name, onchange: (event) => go({ [name]: event.target.value, page: 0 }) },
      options.map(([value, label]) => h("option", { value, selected: value === filters[name] }, label)),
    );
  const player = h("input", { name: "player", type: "search", value: filters.player, placeholder: "a name or strategy" });
  const form = h(
    "form",
    {
      class: "filters",
      onsubmit: (event) => {
        event.preventDefault();
        go({ player: player.value.trim(), page: 0 });
      },
    },
    h("label", {}, "game ", select("game", [["", "any"], ...config.games.map((game) => [game, game])])),
    h("label", {}, "player ", player),
    h("label", {}, "status ", select("status", [["", "any"], ["running", "running"], ["finished", "finished"], ["abandoned", "abandoned"]])),
    h("button", { type: "submit" }, "filter"),
  );
  const body = h("div", {}, h("p", { class: "loading" }, "loading…"));
  root.replaceChildren(h("h1", {}, "matches"), form, body);
  try {
    const matches = await getJson("/api/matches", { ...filters, limit: PAGE + 1, offset: page * PAGE });
    const more = matches.length > PAGE;
    const pager = h(
      "p",
      { class: "pager" },
      page > 0 ? h("a", { href: "#", rel: "prev", onclick: (event) => { event.preventDefault(); go({ page: page - 1 }); } }, "← newer") : null,
      ` page ${page + 1} `,
      more ? h("a", { href: "#", rel: "next", onclick: (event) => { event.preventDefault(); go({ page: page + 1 }); } }, "older →") : null,
    );
    body.replaceChildren(matches.length ? table(matches.slice(0, PAGE)) : h("p", {}, "no matches"), pager);
  } catch (error) {
    body.replaceChildren(h("p", { class: "error", role: "alert" }, String(error)));
  }
}
