// Where the viewer's data comes from: a running `matchlog serve` (ServerSource), or the data an
// exported HTML file carries (FileSource). Both answer the same questions, so the controller and
// the views are the same code for the page and for the file.

/** The reader's token: the page's `?token=`, kept on every link and request. */
export function token() {
  return new URLSearchParams(location.search).get("token");
}

/** `href` with the reader's token added (when there is one). */
export function withToken(href) {
  const given = token();
  if (!given) return href;
  return href + (href.includes("?") ? "&" : "?") + "token=" + encodeURIComponent(given);
}

/** An error the service answered with: its stable code and message, as the CLI prints them. */
export class ApiError extends Error {
  constructor(code, message, status) {
    super(message);
    this.code = code;
    this.status = status;
  }

  toString() {
    return `error[${this.code}]: ${this.message}`;
  }
}

/** GET a JSON answer from the service; `params` with null values are left out. */
export async function getJson(path, params = {}) {
  const url = new URL(path, location.origin);
  for (const [name, value] of Object.entries(params)) {
    if (value !== null && value !== undefined && value !== "") url.searchParams.set(name, value);
  }
  const given = token();
  let response;
  try {
    response = await fetch(url, { headers: given ? { Authorization: `Bearer ${given}` } : {} });
  } catch (error) {
    throw new ApiError("remote.unreachable", `cannot reach the server: ${error.message}`, 0);
  }
  const body = await response.json().catch(() => null);
  if (!response.ok) {
    throw new ApiError(body?.code ?? `http.${response.status}`, body?.message ?? response.statusText, response.status);
  }
  return body;
}

/** One match on a running service. `view` is an `as_seat` (null: the whole record). */
export class ServerSource {
  constructor(matchId) {
    this.matchId = matchId;
    this.canFollow = typeof EventSource !== "undefined";
  }

  async info() {
    const info = await getJson(`/api/matches/${encodeURIComponent(this.matchId)}`);
    this.matchId = info.match_id;
    return info;
  }

  views() {
    return getJson(`/api/matches/${this.matchId}/views`);
  }

  lines(view) {
    return getJson(`/api/matches/${this.matchId}/events`, { as_seat: view });
  }

  frames(view, start, stop) {
    return getJson(`/api/matches/${this.matchId}/frames`, { as_seat: view, start, stop });
  }

  /** The audit as the token may see it (the same whatever the view). */
  audit() {
    return getJson(`/api/matches/${this.matchId}/audit`);
  }

  /** The annotations as `view` sees them, each player's summary and the evaluation graph. */
  analysis(view) {
    return getJson(`/api/matches/${this.matchId}/annotations`, { as_seat: view });
  }

  /** Where the dispute report about `seq` is (the token decides what it shows). */
  disputeHref(seq) {
    return withToken(`/matches/${this.matchId}/audit/${seq}`);
  }

  matchHref(matchId) {
    return withToken(`/matches/${matchId}`);
  }

  /** Follow the match from seq `from`: `on.line(line)` for each event, `on.end()` when it has
   * ended, `on.state(open)` as the connection comes and goes. Returns a function that stops. */
  follow(view, from, on) {
    const url = new URL(`/api/matches/${this.matchId}/follow`, location.origin);
    url.searchParams.set("from", from);
    if (view !== null && view !== undefined) url.searchParams.set("as_seat", view);
    const given = token();
    if (given) url.searchParams.set("token", given);
    const stream = new EventSource(url);
    stream.addEventListener("line", (message) => on.line(JSON.parse(message.data)));
    stream.addEventListener("end", () => {
      stream.close();
      on.end();
    });
    stream.onopen = () => on.state(true);
    stream.onerror = () => on.state(stream.readyState !== EventSource.CLOSED);
    return () => stream.close();
  }
}

/** The key of a view in an exported file's data. */
export function viewKey(view) {
  return view === null || view === undefined ? "all" : String(view);
}

/** One match as an exported file carries it: every allowed view's lines, frames, findings and
 * dispute reports, each value stored once in `pool` and named by its index. */
export class FileSource {
  constructor(data) {
    this.data = data;
    this.matchId = data.info.match_id;
    this.canFollow = false;
  }

  view(view) {
    const found = this.data.by_view[viewKey(view)];
    if (!found) {
      throw new ApiError("auth.view", `this file does not hold the view ${viewKey(view)}`, 403);
    }
    return found;
  }

  async info() {
    return this.data.info;
  }

  async views() {
    return { views: this.data.views, default: this.data.default };
  }

  async lines(view) {
    return this.view(view).lines.map((index) => this.data.pool[index]);
  }

  async frames(view, start, stop) {
    return this.view(view)
      .frames.slice(start, stop + 1)
      .map((index) => this.data.pool[index]);
  }

  async audit(view) {
    return { findings: this.view(view).findings };
  }

  async analysis(view) {
    const index = this.view(view).analysis;
    return index === undefined ? null : this.data.pool[index];
  }

  /** The dispute report about `seq` as `view` may see it, when the file holds one. */
  dispute(seq, view) {
    const index = this.view(view).disputes[String(seq)];
    return index === undefined ? null : this.data.pool[index];
  }

  disputeHref(seq, view) {
    return this.dispute(seq, view) ? `#dispute-${seq}` : null;
  }

  matchHref() {
    return null;
  }

  follow() {
    return null;
  }
}
