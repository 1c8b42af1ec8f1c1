#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""A stand-in for a Grafana Pyroscope server's HTTP ingest API, for tests.

POST /ingest?name=APP{k=v,...}&from=S&until=S&format=pprof&sampleRate=HZ&spyName=X
with a multipart/form-data body: a "profile" part (pprof, gzipped or not)
and an optional "sample_type_config" part (JSON); or, as Pyroscope also
takes it, a body that is no form and is the pprof itself (what the
language SDKs, @pyroscope/nodejs among them, send). Answers as Pyroscope
does: 400 when name, from or until is missing or from/until not numeric,
or the body is not the form it should be; 415 on an unknown format; 401
when --basic, --bearer or --tenant is given and the request does not
match; 200 with an empty body when accepted.

Options:
  --port N          0: any free port (the one chosen is stdout's first line)
  --dir DIR         each accepted profile as NNNNNN.pb (the pprof, gunzipped)
                    and NNNNNN.json (query, labels, headers, parts), in order
  --delay S         answer each request S seconds late
  --status CODE     answer requests with CODE (body read, nothing parsed)
  --status-count N  only the first N requests (then as usual); 0: all
  --retry-after S   with a Retry-After: S header on those answers
  --count-file F    JSON {"seen": N, "by_status": {"200": N, ...}}, rewritten
                    after each request
  --basic USER:PASS, --bearer TOKEN, --tenant ID
Python 3 standard library only.
"""
import argparse
import base64
import email.message
import email.parser
import gzip
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

# the formats Pyroscope's /ingest takes
FORMATS = {"folded", "lines", "trie", "tree", "pprof", "jfr", "speedscope"}
BODY_MAX = 256 << 20


class State:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.seen = 0
        self.by_status = {}
        self.accepted = 0

    def arrived(self):
        with self.lock:
            self.seen += 1
            return self.seen

    def answered(self, code):
        with self.lock:
            k = str(code)
            self.by_status[k] = self.by_status.get(k, 0) + 1
            if self.args.count_file:
                tmp = self.args.count_file + ".tmp"
                with open(tmp, "w") as f:
                    json.dump({"seen": self.seen, "by_status": self.by_status}, f)
                os.replace(tmp, self.args.count_file)

    def next_accepted(self):
        with self.lock:
            self.accepted += 1
            return self.accepted


def parse_labels(name):
    """'app{k=v,k2=v2}' -> ('app', {'k': 'v', 'k2': 'v2'}), None when bad"""
    if "{" not in name:
        return name, {}
    app, rest = name.split("{", 1)
    if not rest.endswith("}"):
        return None
    labels = {}
    body = rest[:-1].strip()
    if body:
        for kv in body.split(","):
            if "=" not in kv:
                return None
            k, v = kv.split("=", 1)
            labels[k.strip()] = v.strip()
    return app, labels


def header_params(block):
    """the part's headers (bytes) as an email Message"""
    return email.parser.BytesHeaderParser().parsebytes(block + b"\r\n\r\n")


def parse_form(content_type, body):
    """[(name, filename, data)] of a multipart/form-data body, or an error"""
    m = email.message.Message()
    m["content-type"] = content_type or ""
    if m.get_content_type() != "multipart/form-data":
        return None, "not multipart/form-data: %r" % content_type
    boundary = m.get_param("boundary")
    if not boundary:
        return None, "multipart/form-data without a boundary"
    delim = b"\r\n--" + boundary.encode("latin-1")
    pieces = (b"\r\n" + body).split(delim)
    if len(pieces) < 3:
        return None, "no parts"
    parts = []
    closed = False
    for piece in pieces[1:]:
        if piece.startswith(b"--"):
            closed = True
            break
        # transport padding, then CRLF, headers, CRLF CRLF, data
        line_end = piece.find(b"\r\n")
        if line_end < 0 or piece[:line_end].strip(b" \t"):
            return None, "bad boundary line"
        piece = piece[line_end + 2:]
        sep = piece.find(b"\r\n\r\n")
        if sep < 0:
            if piece.startswith(b"\r\n"):
                hdrs, data = b"", piece[2:]
            else:
                return None, "part without headers"
        else:
            hdrs, data = piece[:sep], piece[sep + 4:]
        h = header_params(hdrs)
        if h.get_content_disposition() != "form-data":
            return None, "part not form-data"
        name = h.get_param("name", header="content-disposition")
        if name is None:
            return None, "part without a name"
        parts.append((name, h.get_filename(), h.get("content-type"), data))
    if not closed:
        return None, "form not closed"
    return parts, None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "pyroscope-receiver"

    def log_message(self, fmt, *a):
        sys.stderr.write("receiver: %s\n" % (fmt % a))

    def answer(self, code, text="", headers=()):
        body = text.encode()
        try:
            if self.server.state.args.delay:
                time.sleep(self.server.state.args.delay)
            self.send_response(code)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            for k, v in headers:
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass
        self.server.state.answered(code)

    def auth_ok(self):
        a = self.server.state.args
        if a.basic or a.bearer:
            got = self.headers.get("Authorization", "")
            ok = False
            if a.basic:
                want = "Basic " + base64.b64encode(a.basic.encode()).decode()
                ok = ok or got == want
            if a.bearer:
                ok = ok or got == "Bearer " + a.bearer
            if not ok:
                return False
        if a.tenant and self.headers.get("X-Scope-OrgID") != a.tenant:
            return False
        return True

    def do_GET(self):
        self.server.state.arrived()
        self.answer(404 if urlsplit(self.path).path != "/ready" else 200, "")

    def do_POST(self):
        st = self.server.state
        a = st.args
        n = st.arrived()
        try:
            length = int(self.headers.get("Content-Length", "0"))
        except ValueError:
            return self.answer(400, "bad Content-Length")
        if self.headers.get("Transfer-Encoding") or length < 0 or length > BODY_MAX:
            self.close_connection = True
            return self.answer(413, "body too large or chunked")
        body = self.rfile.read(length)
        if a.status and (a.status_count == 0 or n <= a.status_count):
            extra = [("Retry-After", a.retry_after)] if a.retry_after else []
            return self.answer(a.status, "status %d, as told" % a.status, extra)
        url = urlsplit(self.path)
        if url.path != "/ingest":
            return self.answer(404, "not found")
        if not self.auth_ok():
            return self.answer(401, "unauthorized")
        q = {k: v[-1] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
        for k in ("name", "from", "until"):
            if not q.get(k):
                return self.answer(400, "missing %s" % k)
        try:
            t_from, t_until = int(q["from"]), int(q["until"])
        except ValueError:
            return self.answer(400, "from and until must be numbers")
        fmt = q.get("format", "folded")
        if fmt not in FORMATS:
            return self.answer(415, "unknown format %s" % fmt)
        if fmt != "pprof":
            return self.answer(400, "this receiver takes format=pprof only")
        labels = parse_labels(q["name"])
        if labels is None:
            return self.answer(400, "bad name %s" % q["name"])
        ctype = self.headers.get("Content-Type") or ""
        if ctype.lower().startswith("multipart/"):
            parts, why = parse_form(ctype, body)
            if parts is None:
                return self.answer(400, why)
        else:
            # as Pyroscope reads it: a body that is no form is the pprof
            # itself (what the language SDKs send)
            parts = [("profile", None, ctype or None, body)]
        by_name = {p[0]: p for p in parts}
        if "profile" not in by_name:
            return self.answer(400, "no profile part")
        raw = by_name["profile"][3]
        pprof = raw
        if raw[:2] == b"\x1f\x8b":
            try:
                pprof = gzip.decompress(raw)
            except (OSError, EOFError) as e:
                return self.answer(400, "profile: bad gzip: %s" % e)
        stc = None
        if "sample_type_config" in by_name:
            try:
                stc = json.loads(by_name["sample_type_config"][3])
            except ValueError as e:
                return self.answer(400, "sample_type_config: bad JSON: %s" % e)
        if a.dir:
            i = st.next_accepted()
            meta = {
                "seq": i,
                "name": q["name"],
                "app": labels[0],
                "labels": labels[1],
                "from": t_from,
                "until": t_until,
                "format": fmt,
                "sampleRate": int(q["sampleRate"]) if q.get("sampleRate", "").isdigit() else q.get("sampleRate"),
                "spyName": q.get("spyName"),
                "query": q,
                "headers": {k.lower(): self.headers.get(k) for k in
                            ("Authorization", "X-Scope-OrgID", "Content-Type",
                             "User-Agent", "Expect")
                            if self.headers.get(k) is not None},
                "parts": [{"name": p[0], "filename": p[1], "content_type": p[2],
                           "len": len(p[3])} for p in parts],
                "profile_gzipped": raw[:2] == b"\x1f\x8b",
                "profile_raw_len": len(raw),
                "sample_type_config": stc,
            }
            base = os.path.join(a.dir, "%06d" % i)
            with open(base + ".pb.tmp", "wb") as f:
                f.write(pprof)
            os.replace(base + ".pb.tmp", base + ".pb")
            # the .json last: a reader that sees it sees the .pb too
            with open(base + ".json.tmp", "w") as f:
                json.dump(meta, f, indent=1, sort_keys=True)
            os.replace(base + ".json.tmp", base + ".json")
        return self.answer(200, "")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=4040)
    ap.add_argument("--dir")
    ap.add_argument("--delay", type=float, default=0)
    ap.add_argument("--status", type=int, default=0)
    ap.add_argument("--status-count", type=int, default=0)
    ap.add_argument("--retry-after")
    ap.add_argument("--count-file")
    ap.add_argument("--basic")
    ap.add_argument("--bearer")
    ap.add_argument("--tenant")
    args = ap.parse_args()
    if args.basic and ":" not in args.basic:
        ap.error("--basic USER:PASS")
    if args.dir:
        os.makedirs(args.dir, exist_ok=True)

    ThreadingHTTPServer.allow_reuse_address = True
    ThreadingHTTPServer.daemon_threads = True
    srv = ThreadingHTTPServer((args.host, args.port), Handler)
    srv.state = State(args)
    print(srv.server_address[1], flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
