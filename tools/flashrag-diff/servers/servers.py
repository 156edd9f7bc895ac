"""One process, two HTTP servers sharing a run tag:
  - a Search-R1-style /retrieve server (fixtures.retrieve: the best 4 passages, fewer when `topk`
    asks for fewer), logging every query;
  - a scripted OpenAI-compatible server (/v1/chat/completions, /v1/completions) whose replies
    continue each method's per-question script from where the prompt shows the model to be,
    then apply the request's stop strings like the OpenAI API (stop excluded) or, with
    include_stop, like vLLM with include_stop_str_in_output=True (FlashRAG's vLLM path).
    For FLARE and Self-RAG (tags containing "flare" / "self-rag") the replies carry token
    log-probabilities (fixtures/logprob_models.py): chat `logprobs.content[]`, completions
    `tokens` / `token_logprobs` / `top_logprobs` (the top `logprobs` alternatives, and the
    generated token, as vLLM returns them).
POST /reset {"tag", "include_stop", "ircot_style": strict|verbose, "selfask_end": hash|eos,
"sure_format": asked|inline|bare} on either port starts a new log (logs/TAG.llm.jsonl, logs/TAG.ret.jsonl)
with fresh counters. Every logged call carries the kind of prompt it answered (`kind_of`)."""
import json, math, os, re, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', 'fixtures'))
from fixtures import (QUESTIONS, retrieve, EVIDENCE, ANSWER, IRCOT, SELF_ASK, ITER_RETGEN, SURE, ADAPTIVE_ROUTE, SKR_RETRIEVE,
                      find_question, CORPUS)
from logprob_models import flare_reply, cut_tokens, selfrag_case, selfrag_positions, top_k

LOGDIR = os.path.join(os.path.dirname(__file__), '..', 'logs')
LOCK = threading.Lock()
STATE = {"tag": "default", "include_stop": False, "ircot_style": "strict", "selfask_end": "hash", "sure_format": "asked", "calls": {}, "seq": 0}


def log(kind, rec):
    with LOCK:
        STATE["seq"] += 1
        rec = {"seq": STATE["seq"], "t": time.time(), **rec}
        with open(os.path.join(LOGDIR, f'{STATE["tag"]}.{kind}.jsonl'), 'a') as f:
            f.write(json.dumps(rec) + '\n')


# ---------------------------------------------------------------- oracles
RT_IRCOT_FORCED = "No more paragraphs will be looked up"
RT_SELFASK_FORCED = "No more follow-up questions can be looked up"


def ircot_reply(prompt_msgs, text, tail, qid, style):
    chain = IRCOT[qid]
    if RT_IRCOT_FORCED in tail:
        return f"So the answer is: {ANSWER[qid]}."
    # what the model has written so far
    if "Reasoning so far: " in tail:  # ragtrail
        written = tail.split("Reasoning so far: ", 1)[1].split("\n\n", 1)[0]
        if written == "(nothing yet)":
            written = ""
    else:  # FlashRAG: previous thoughts are an assistant message after the user's question
        written = prompt_msgs[-1]["content"] if prompt_msgs and prompt_msgs[-1].get("role") == "assistant" else ""
    full = " ".join(chain)
    w = " ".join(written.split())
    if full.startswith(w):
        pos = len(w)
    else:  # not a prefix: count whole sentences already written
        k = 0
        while k < len(chain) and chain[k].rstrip('.') in w:
            k += 1
        pos = len(" ".join(chain[:k]))
    rest = full[pos:].lstrip()
    if not rest:
        return chain[-1]
    if style == "verbose":
        return rest
    # strict: up to the end of the chain element containing pos
    ends, acc = [], 0
    for s in chain:
        acc += len(s) + 1
        ends.append(acc - 1)
    end = next(e for e in ends if e > pos)
    return full[pos:end].lstrip()


def selfask_reply(tail, qid, end_mode):
    fus = SELF_ASK[qid]
    ending = "\n#" if end_mode == "hash" else ""
    final = f"So the final answer is: {ANSWER[qid]}{ending}"
    forced = RT_SELFASK_FORCED in tail
    body = tail.split(RT_SELFASK_FORCED)[0].rstrip() if forced else tail
    # what was written after "Are follow up questions needed here: Yes./No.\n"
    m = re.search(r"Are follow up questions needed here: (Yes|No)\.\n?", body)
    w = body[m.end():] if m else ""
    events = []
    for line in w.split("\n"):
        s = line.strip()
        if s.startswith("Follow up:"):
            events.append(("F", s[len("Follow up:"):].strip()))
        elif s.startswith("Intermediate answer:"):
            events.append(("I", s[len("Intermediate answer:"):].strip()))
        elif "So the final answer is:" in s:
            events.append(("A", s))
    nF = sum(1 for e in events if e[0] == "F")
    nl = "\n" if w and not w.endswith("\n") else ""

    def rest(j):
        return "".join(f"Follow up: {q}\nIntermediate answer: {a}\n" for q, a in fus[j:]) + final

    if forced:
        due = events and events[-1][0] in ("F",) or (events and events[-1] == ("I", ""))
        ia = fus[nF - 1][1] if (due and 0 < nF <= len(fus)) else ""
        if events and events[-1] == ("I", ""):
            return f" {ia}\n{final}"
        return (f"{nl}Intermediate answer: {ia}\n" if ia else nl) + final
    if nF > len(fus) or (events and events[-1][0] == "A"):
        return nl + final
    if not events:
        return nl + rest(0)
    kind, txt = events[-1]
    if kind == "F" and not txt:
        return f" {fus[nF-1][0]}\nIntermediate answer: {fus[nF-1][1]}\n" + rest(nF)
    if kind == "F":
        return f"{nl}Intermediate answer: {fus[nF-1][1]}\n" + rest(nF)
    if kind == "I" and not txt:
        return f" {fus[nF-1][1]}\n" + rest(nF)
    return nl + rest(nF)


def iter_retgen_reply(text, qid, idx):
    script = ITER_RETGEN[qid]
    ans = script[min(idx, len(script) - 1)]
    return f"Answer: {ans}" if 'End with a line of the form "Answer:' in text else ans


# ---------------------------------------------------------------- SuRe, Adaptive-RAG, SKR
# The kind of prompt, from phrases only that prompt has (FlashRAG's pipelines' and ragtrail's protocols').
KINDS = [
    # SuRe (FlashRAG branching_pipeline.py SuRePipeline.load_prompts; ragtrail src/agents/sure.ts)
    ("fr-sure-cand", "provide two correct candidates"), ("rt-sure-cand", "different short candidate answers"),
    ("fr-sure-sum", "act as a professional writer"), ("rt-sure-sum", "summarise what the documents say that supports the answer"),
    ("fr-sure-val", "Does the passage correctly support the prediction?"), ("rt-sure-val", "Does the summary support the proposed answer?"),
    ("fr-sure-rank", "determine which one provides a"), ("rt-sure-rank", "Which summary is more informative"),
    # routers' decisions (ragtrail src/agents/adaptive-rag.ts, skr.ts; FlashRAG's are classifiers, stubbed)
    ("rt-route-adaptive", "Judge how much looking up this question needs"), ("rt-route-skr", "Do you need outside information"),
    # IRCoT (FlashRAG IRCOTPipeline's instruction; ragtrail src/agents/ircot.ts)
    ("fr-ircot", "adept at facilitating users through complex, multi-hop reasoning"), ("rt-ircot", "Reasoning so far: "),
    # one-call answers: ragtrail rag-gym.ts rag / cot / direct; FlashRAG's default template (SequentialPipeline)
    # and its no-retrieval templates (AdaptivePipeline norag, ConditionalPipeline zero-shot)
    ("rt-rag", "Using the documents, think it through step by step"), ("rt-cot", "Think it through step by step. End with"),
    ("rt-direct", "Reply with the answer only"), ("fr-rag", "Answer the question based on the given document"),
    ("fr-norag", "Answer the question based on your own knowledge"),
]


def kind_of(text):
    return next((k for k, phrase in KINDS if phrase in text), None)


def cot_text(qid):
    """The reasoning the model writes before an "Answer:" line (ragtrail's rag / cot prompts)."""
    return " ".join(a for _, a in SELF_ASK[qid]) or "I know who this is."


def sure_cands_text(qid, side, fmt):
    cands = SURE[qid]["cands"]
    if fmt == "bare":  # no (a)/(b) markers: only the first candidate, as a bare answer
        return cands[0]
    inline = fmt == "inline" or side == "fr"  # FlashRAG asks for "(a) xx, (b) yy"; ragtrail for one per line
    parts = [f"({'abcdefgh'[i]}) {c}" for i, c in enumerate(cands)]
    return ", ".join(parts) if inline else "\n".join(parts)


def sure_index(qid, cand):
    cands = [c.lower() for c in SURE[qid]["cands"]]
    c = cand.strip().strip('"').strip().lower()
    return cands.index(c) if c in cands else None


def sure_reply(kind, text, qid, fmt):
    sc = SURE[qid]
    side = kind[:2]
    if kind.endswith("-cand"):
        return sure_cands_text(qid, side, fmt)
    if kind.endswith("-sum"):
        m = re.search(r'Prediction: (.*)\n', text) if side == "fr" else re.search(r'supports the answer "(.*)"\. Summary:', text)
        i = sure_index(qid, m.group(1)) if m else None
        summ = sc["summ"][i] if i is not None else f"The documents say little about {m.group(1) if m else 'this answer'}."
        return summ + (" [DONE]" if side == "fr" else "")  # FlashRAG's prompt asks for a closing [DONE]
    if kind.endswith("-val"):
        m = re.search(r'Prediction: (.*)\n', text) if side == "fr" else re.search(r'Proposed answer: (.*)\n', text)
        i = sure_index(qid, m.group(1)) if m else None
        return "True" if i is not None and sc["valid"][i] else "False"
    if kind.endswith("-rank"):
        # which candidate's summary stands first and which second
        at = sorted((text.find(s), i) for i, s in enumerate(sc["summ"]) if text.find(s) >= 0)
        first = 1
        if not sc["biased"] and len(at) == 2:
            (_, i), (_, j) = at
            first = 1 if sc["prefer"].index(i) < sc["prefer"].index(j) else 2
        return f"Passage {first}" if side == "fr" else str(first)
    if kind == "rt-rag":  # ragtrail's fallback when no candidate can be read
        return f"{cot_text(qid)}\nAnswer: {ANSWER[qid]}"
    return "I do not know."


def routed_reply(kind, msgs, text, tail, qid, style):
    """Adaptive-RAG and SKR: the routers' decision, then whichever answering pipeline it chose."""
    if kind == "rt-route-adaptive":
        return ADAPTIVE_ROUTE[qid]
    if kind == "rt-route-skr":
        return "yes" if SKR_RETRIEVE[qid] else "no"
    if kind in ("fr-ircot", "rt-ircot"):
        return ircot_reply(msgs, text, tail, qid, style)
    if kind in ("rt-rag", "rt-cot"):
        return f"{cot_text(qid)}\nAnswer: {ANSWER[qid]}"
    if kind in ("rt-direct", "fr-rag", "fr-norag"):
        return ANSWER[qid]
    return "I do not know."


def apply_stop(full, stop, include):
    if not stop:
        return full, "stop"
    if isinstance(stop, str):
        stop = [stop]
    best = None
    for s in stop:
        i = full.find(s) if s else -1
        if i >= 0 and (best is None or i < best[0]):
            best = (i, s)
    if best is None:
        return full, "stop"
    i, s = best
    return (full[: i + len(s)] if include else full[:i]), "stop"


def llm(body, chat):
    if chat:
        msgs = body["messages"]
        text = "\n".join(m["content"] if isinstance(m["content"], str) else json.dumps(m["content"]) for m in msgs)
    else:
        msgs = None
        p = body["prompt"]
        text = p if isinstance(p, str) else p[0]
    tag = STATE["tag"]
    found = find_question(text)
    stop = body.get("stop")
    if found is None:
        full, qid, idx = "I do not know.", None, None
    else:
        q, at = found
        qid = q["id"]
        STATE["cur"] = qid
        tail = text[at + len(q["question"]):]
        with LOCK:
            idx = STATE["calls"].get(qid, 0)
            STATE["calls"][qid] = idx + 1
        if "ircot" in tag:
            full = ircot_reply(msgs, text, tail, qid, STATE["ircot_style"])
        elif "self-ask" in tag:
            full = selfask_reply(tail, qid, STATE["selfask_end"])
        elif "iter-retgen" in tag:
            full = iter_retgen_reply(text, qid, idx)
        elif "sure" in tag:
            full = sure_reply(kind_of(text) or "", text, qid, STATE["sure_format"])
        elif "adaptive" in tag or "skr" in tag:
            full = routed_reply(kind_of(text), msgs, text, tail, qid, STATE["ircot_style"])
        else:
            full = "I do not know."
    out, finish = apply_stop(full, stop, STATE["include_stop"])
    evid = [m in text for m in EVIDENCE[qid]] if qid else None
    log("llm", {"qid": qid, "call": idx, "kind": kind_of(text), "endpoint": "chat" if chat else "completion", "stop": stop,
                "max_tokens": body.get("max_tokens"), "prompt": msgs if chat else text, "full": full, "text": out, "evidence": evid})
    return out, finish


# ---------------------------------------------------------------- FLARE, Self-RAG (token log-probabilities)
FR_FLARE_STOP = "!"  # FlashRAG's FLARE stop symbols start with "!"; ragtrail's FLARE stops at a blank line
RT_FLARE_DRAFT = "Answer so far: "


def flare_written(msgs, text):
    """What the prompt shows the model to have written: FlashRAG passes it as a trailing assistant
    message (previous_gen), ragtrail after "Answer so far: "."""
    if msgs and msgs[-1].get("role") == "assistant":
        return msgs[-1]["content"], "fr"
    if RT_FLARE_DRAFT in text:
        w = text.rsplit(RT_FLARE_DRAFT, 1)[1].split("\n\n", 1)[0]
        return ("" if w == "(nothing yet)" else w), "rt"
    return "", ("fr" if "Answer the question based on the given document" in text else "rt")


def has_docs(text):
    return any(body in text for _, _, body, _ in CORPUS)


def logprob_llm(body, chat):
    """FLARE and Self-RAG: the reply with its token log-probabilities, and the log record."""
    msgs = body.get("messages") if chat else None
    if chat:
        text = "\n".join(m["content"] if isinstance(m["content"], str) else json.dumps(m["content"]) for m in msgs)
    else:
        text = body["prompt"] if isinstance(body["prompt"], str) else body["prompt"][0]
    found = find_question(text)
    qid = found[0]["id"] if found else None
    if qid:
        STATE["cur"] = qid  # the retriever attributes the next queries to it
    with LOCK:
        idx = STATE["calls"].get(qid, 0)
        STATE["calls"][qid] = idx + 1
    want = body.get("logprobs")
    k = (body.get("top_logprobs") or 0) if chat else (want if isinstance(want, int) and not isinstance(want, bool) else 0)
    max_tokens = body.get("max_tokens")
    extra = {}
    if "flare" in STATE["tag"]:
        written, side = flare_written(msgs, text)
        if side == "fr":
            kind = "fr-flare-regen" if has_docs(text) else "fr-flare-look"
        else:
            kind = "rt-flare-conclude" if "Finish the answer now" in text else "rt-flare"
        toks, lps, finish = flare_reply(qid, written, text, max_tokens) if qid else ([], [], "stop")
        full = "".join(toks)
        out, toks, lps, cut = cut_tokens(toks, lps, body.get("stop"), STATE["include_stop"])
        finish = "stop" if cut else finish
        tops = [{t: l} for t, l in zip(toks, lps)]
        extra = {"written": written}
    else:  # Self-RAG
        case = selfrag_case(text)
        kind = f"rt-selfrag-{case[1]}" if case else None
        positions = selfrag_positions(text)
        finish = "stop"
        if max_tokens is not None and len(positions) > max_tokens:
            positions, finish = positions[:max_tokens], "length"
        toks = [t for t, _ in positions]
        lps = [d[t] for t, d in positions]
        tops = [top_k(d, k, t) for t, d in positions]
        full = out = "".join(toks)
        if case and case[2]:
            extra = {"passage": case[2]}
    lp = None
    if want:
        if chat:
            lp = {"content": [{"token": t, "logprob": l, "bytes": list(t.encode()),
                               "top_logprobs": [{"token": a, "logprob": b, "bytes": list(a.encode())} for a, b in tp.items()] if k else []}
                              for t, l, tp in zip(toks, lps, tops)]}
        else:
            offs, at = [], 0
            for t in toks:
                offs.append(at)
                at += len(t)
            lp = {"tokens": toks, "token_logprobs": lps, "top_logprobs": tops if k else None, "text_offset": offs}
    evid = [m in text for m in EVIDENCE[qid]] if qid else None
    log("llm", {"qid": qid, "call": idx, "kind": kind, "endpoint": "chat" if chat else "completion", "stop": body.get("stop"),
                "max_tokens": max_tokens, "logprobs": want, "top_logprobs": k, "prompt": msgs if chat else text, "full": full,
                "text": out, "tokens": [[t, round(math.exp(l), 6)] for t, l in zip(toks, lps)], "finish": finish, **extra, "evidence": evid})
    return out, finish, lp


class H(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def reply(self, obj, code=200):
        b = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)

    def do_GET(self):
        if self.path.rstrip('/').endswith("/models"):
            return self.reply({"object": "list", "data": [{"id": "scripted", "object": "model"}]})
        self.reply({"ok": True, "tag": STATE["tag"]})

    def do_POST(self):
        n = int(self.headers.get("content-length", 0))
        body = json.loads(self.rfile.read(n) or b"{}")
        p = self.path.split("?")[0].rstrip("/")
        if p == "/reset":
            with LOCK:
                STATE.update({"tag": body.get("tag", "default"), "include_stop": bool(body.get("include_stop", False)),
                              "ircot_style": body.get("ircot_style", "strict"), "selfask_end": body.get("selfask_end", "hash"),
                              "sure_format": body.get("sure_format", "asked"),
                              "calls": {}, "seq": 0, "cur": None})
                for k in ("llm", "ret"):
                    fn = os.path.join(LOGDIR, f'{STATE["tag"]}.{k}.jsonl')
                    if os.path.exists(fn):
                        os.remove(fn)
            return self.reply({"ok": True, **{k: v for k, v in STATE.items() if k != "calls"}})
        if p == "/retrieve":
            qs = body.get("queries", [])
            topk = body.get("topk", 5)
            res = []
            for q in qs:
                docs = retrieve(q)[:topk]  # at most fixtures.N_RETURN (4), as many as asked for below that
                f = find_question(q)
                if f is not None:
                    STATE["cur"] = f[0]["id"]
                log("ret", {"qid": STATE.get("cur"), "query": q, "topk": topk, "ids": [d["id"] for d in docs]})
                if body.get("return_scores", True):
                    res.append([{"document": {k: d[k] for k in ("id", "contents", "title", "text")}, "score": d["score"]} for d in docs])
                else:
                    res.append([{k: d[k] for k in ("id", "contents", "title", "text")} for d in docs])
            return self.reply({"result": res})
        if p.endswith("/chat/completions") or p.endswith("/completions"):
            chat = p.endswith("/chat/completions")
            lp = None
            if "flare" in STATE["tag"] or "self-rag" in STATE["tag"]:
                out, finish, lp = logprob_llm(body, chat)
            else:
                out, finish = llm(body, chat)
            usage = {"prompt_tokens": 1, "completion_tokens": max(1, len(out.split())), "total_tokens": 2}
            base = {"id": f"cmpl-{STATE['seq']}", "created": int(time.time()), "model": body.get("model", "scripted"), "usage": usage}
            if chat:
                return self.reply({**base, "object": "chat.completion", "choices": [{"index": 0, "message": {"role": "assistant", "content": out}, "finish_reason": finish, "logprobs": lp}]})
            return self.reply({**base, "object": "text_completion", "choices": [{"index": 0, "text": out, "finish_reason": finish, "logprobs": lp}]})
        self.reply({"error": f"no route {p}"}, 404)


if __name__ == "__main__":
    os.makedirs(LOGDIR, exist_ok=True)
    ports = [int(sys.argv[1]) if len(sys.argv) > 1 else 18001, int(sys.argv[2]) if len(sys.argv) > 2 else 18002]
    servers = [ThreadingHTTPServer(("127.0.0.1", p), H) for p in ports]
    for s in servers[1:]:
        threading.Thread(target=s.serve_forever, daemon=True).start()
    print("serving", ports, flush=True)
    servers[0].serve_forever()
