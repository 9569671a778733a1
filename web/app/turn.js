/**
 * A turn's life on the page: one state at a time, each change announced, none skipped.
 *
 *   idle ─begin─▶ sending ─stored─▶ streaming ⇄ awaiting ─end─▶ done | stopped | failed ─settle─▶ idle
 *                    └─refuse(reason)─▶ idle
 *
 * `sending` is the gap between the person pressing Send and their message being on disk: the composer
 * keeps their words until `stored()` (or, on `refuse`, keeps them for good and shows the reason). A
 * turn that is not idle refuses another with a reason (`begin` answers {ok: false, reason}), never in
 * silence. `awaiting` is a question to the person (an approval, a server's form, a sampling request);
 * the next event of the stream ends it. After `end` the transcript is put in order before `settle`
 * makes the turn idle again: `settled()` waits for that, so a message sent right after a reply waits
 * for it instead of being refused or drawn over.
 *
 *   const turn = new Turn({onChange: (state, previous) => …})
 *   const begun = turn.begin()          {ok: true, run} | {ok: false, reason: "busy"}
 *   turn.stored() · turn.refuse(reason) · turn.awaiting() · turn.streaming() · turn.end(status) · turn.settle()
 *   turn.run                            the running turn's data (its call id, Stop's flag), null when idle
 *
 * No DOM here: tests/web/turn.test.mjs drives every transition in Node.
 */

/**
 * @typedef {"idle" | "sending" | "streaming" | "awaiting" | "done" | "stopped" | "failed"} TurnState
 * @typedef {"done" | "stopped" | "failed"} TurnEnd
 * @typedef {{cancelled: boolean, callId: number | null | undefined}} TurnRun   the running turn's data (callId: its chat.run call, to cancel)
 */

/** @type {readonly TurnState[]} */
export const TURN_STATES = Object.freeze(["idle", "sending", "streaming", "awaiting", "done", "stopped", "failed"]);
/** @type {readonly string[]} */
export const TURN_ENDS = Object.freeze(["done", "stopped", "failed"]);

// Which state each one may move to: anything else is a bug in the caller, thrown at once.
/** @type {Record<TurnState, readonly string[]>} */
const NEXT = {
  idle: ["sending"],
  sending: ["streaming", "idle"],
  streaming: ["awaiting", ...TURN_ENDS],
  awaiting: ["streaming", ...TURN_ENDS],
  done: ["idle"],
  stopped: ["idle"],
  failed: ["idle"],
};

export class Turn {
  /** @param {{onChange?: (state: TurnState, previous: TurnState) => void}} [options] */
  constructor({ onChange = () => {} } = {}) {
    this.onChange = onChange;
    /** @type {TurnState} */
    this.state = "idle";
    /** @type {TurnRun | null} */
    this.run = null;
    /** @type {string | null} */
    this.reason = null; // why the last turn was refused before its message was stored
    this.#idle = Promise.resolve();
  }

  /** @type {Promise<void>} */
  #idle;
  /** @type {() => void} */
  #markIdle = () => {};

  /** Not idle: a turn is being sent, streamed, asked about or put in order. */
  get busy() {
    return this.state !== "idle";
  }

  /** Resolves once the turn (if any) is over and the transcript put in order. */
  settled() {
    return TURN_ENDS.includes(this.state) ? this.#idle : Promise.resolve();
  }

  /** A new turn, or a refusal saying why there can be none now. */
  /** @returns {{ok: true, run: TurnRun} | {ok: false, reason: string}} */
  begin() {
    if (this.state !== "idle") return { ok: false, reason: "busy" };
    const run = { cancelled: false, callId: undefined };
    this.run = run;
    this.reason = null;
    this.#idle = new Promise((resolve) => (this.#markIdle = resolve));
    this.#go("sending");
    return { ok: true, run };
  }

  /** The person's message is stored: the composer may let go of it, and the reply may start. */
  stored() {
    this.#go("streaming");
  }

  /** The message could not be stored (or no vendor is set up): nothing was sent; `reason` says why. */
  /** @param {string | null} [reason] */
  refuse(reason) {
    this.reason = reason ?? null;
    this.#go("idle");
    this.#finish();
  }

  awaiting() {
    if (this.state === "streaming") this.#go("awaiting");
  }

  streaming() {
    if (this.state === "awaiting") this.#go("streaming");
  }

  /** The call is over: "done", "stopped" (Stop, another chat opened) or "failed". */
  /** @param {string} status */
  end(status) {
    if (!TURN_ENDS.includes(status)) throw new Error(`turn: unknown end ${JSON.stringify(status)}`);
    this.#go(/** @type {TurnEnd} */ (status));
  }

  /** The transcript is in order again: the next turn may begin. */
  settle() {
    this.#go("idle");
    this.#finish();
  }

  #finish() {
    this.run = null;
    this.#markIdle();
  }

  /** @param {TurnState} state */
  #go(state) {
    const previous = this.state;
    if (!NEXT[previous].includes(state)) throw new Error(`turn: ${previous} cannot become ${state}`);
    this.state = state;
    this.onChange(state, previous);
  }
}
