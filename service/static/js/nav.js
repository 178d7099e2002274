// The links at the top of every served page, carrying the reader's token.

import { withToken } from "matchlog/api.js";
import { h } from "matchlog/dom.js";

export function nav() {
  return h(
    "nav",
    { class: "site" },
    h("a", { href: withToken("/"), class: "brand" }, "matchlog"),
    h("a", { href: withToken("/") }, "matches"),
    h("a", { href: withToken("/stats") }, "statistics"),
    h("a", { href: withToken("/ratings") }, "ratings"),
  );
}
