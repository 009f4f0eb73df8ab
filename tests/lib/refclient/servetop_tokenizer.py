"""A tokenizer that is the server's own: every encode, decode and chat
template goes to the tokenizer endpoints of the server under test (SGLang and
vLLM /tokenize and /detokenize, llama.cpp /tokenize, /detokenize and
/apply-template), so the reference client tokenizes exactly as that server
does, with nothing downloaded. See README.

A "tokenizer directory" (what --tokenizer names) holds servetop-tokenizer.json:
  {"base_url": "http://127.0.0.1:PORT", "model": "served-name",
   "vocab_size": N}            # vocab_size optional: llama.cpp says it itself
"""
import http.client
import json
import os
import urllib.parse

CONFIG_NAME = "servetop-tokenizer.json"

# The servers' wire shapes (the same table as servetop's src/loadgen/tokenizer.c).
DIALECTS = [
    dict(name="sglang", text_key="prompt", add_special_key="add_special_tokens",
         skip_special_key="skip_special_tokens", decoded_key="text", sends_model=True,
         template="messages"),
    dict(name="vllm", text_key="prompt", add_special_key="add_special_tokens",
         skip_special_key=None, decoded_key="prompt", sends_model=True, template="messages"),
    dict(name="llama.cpp", text_key="content", add_special_key="add_special",
         skip_special_key=None, decoded_key="content", sends_model=False, template="apply"),
]


class ServerTokenizerError(RuntimeError):
    pass


class ServerTokenizer:
    def __init__(self, directory):
        with open(os.path.join(directory, CONFIG_NAME)) as f:
            cfg = json.load(f)
        url = urllib.parse.urlparse(cfg["base_url"])
        self.host, self.port = url.hostname, url.port or 80
        self.model = cfg.get("model", "default")
        self._conn = None
        self._pid = None
        self.dialect = None
        for d in DIALECTS:
            self.dialect = d
            try:
                ids = self.encode("a b", add_special_tokens=False)
                if ids and self.decode(ids):
                    break
            except ServerTokenizerError:
                pass
            self.dialect = None
        if self.dialect is None:
            raise ServerTokenizerError(f"{cfg['base_url']}: no tokenizer endpoints")
        self.vocab_size = cfg.get("vocab_size") or self._server_vocab_size()
        if not self.vocab_size:
            raise ServerTokenizerError("vocab_size: not in the config and the server does not say")

    # -- HTTP: one keep-alive connection per process (the reference forks workers)
    def _post(self, path, body):
        return self._request("POST", path, json.dumps(body))

    def _request(self, method, path, body=None):
        if self._conn is None or self._pid != os.getpid():
            self._conn = http.client.HTTPConnection(self.host, self.port, timeout=600)
            self._pid = os.getpid()
        headers = {"Content-Type": "application/json"}
        try:
            self._conn.request(method, path, body=body, headers=headers)
            resp = self._conn.getresponse()
            data = resp.read()
        except (OSError, http.client.HTTPException):
            self._conn = None
            raise ServerTokenizerError(f"{method} {path}: no answer")
        if resp.status != 200:
            raise ServerTokenizerError(f"{method} {path}: HTTP {resp.status}: {data[:200]!r}")
        return json.loads(data)

    def _server_vocab_size(self):
        try:
            meta = self._request("GET", "/v1/models")["data"][0].get("meta") or {}
            return meta.get("n_vocab")
        except (ServerTokenizerError, KeyError, IndexError, ValueError):
            return None

    def _body(self, **kw):
        body = {"model": self.model} if self.dialect["sends_model"] else {}
        body.update(kw)
        return body

    # -- what benchmark_serving.py calls
    def encode(self, text, add_special_tokens=True, **_):
        d = self.dialect
        reply = self._post("/tokenize", self._body(**{d["text_key"]: text,
                                                      d["add_special_key"]: add_special_tokens}))
        return [t["id"] if isinstance(t, dict) else t for t in reply["tokens"]]

    def decode(self, ids, skip_special_tokens=False, **_):
        d = self.dialect
        body = self._body(tokens=[int(i) for i in ids])
        if d["skip_special_key"]:
            body[d["skip_special_key"]] = skip_special_tokens
        return self._post("/detokenize", body)[d["decoded_key"]]

    def apply_chat_template(self, messages, add_generation_prompt=True, tokenize=False, **_):
        if self.dialect["template"] == "apply":
            text = self._post("/apply-template", {"messages": messages,
                                                  "add_generation_prompt": add_generation_prompt})["prompt"]
        else:
            ids = self._post("/tokenize", self._body(messages=messages,
                                                     add_generation_prompt=add_generation_prompt,
                                                     add_special_tokens=False))["tokens"]
            text = self.decode(ids)
        return self.encode(text, add_special_tokens=False) if tokenize else text

    def __call__(self, text, add_special_tokens=True, **_):
        class Encoding:
            pass
        e = Encoding()
        e.input_ids = self.encode(text, add_special_tokens=add_special_tokens)
        return e

    def __len__(self):
        return self.vocab_size
