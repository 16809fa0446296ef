#!/usr/bin/env python3
"""Writes the seed corpora of tests/fuzz/corpus/<target>/ (committed; rerun
after changing a target's input layout). Each seed is a valid input in the
layout the target's header comment describes, so fuzzing starts from frames
and messages that reach deep into the decoders and the peer."""
import json, os, struct

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'corpus')

def put(target, name, data):
    d = os.path.join(ROOT, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), 'wb') as f:
        f.write(data)

def frame(framing, body):
    if framing == 0: return b'Content-Length: %d\r\n\r\n' % len(body) + body
    if framing == 1: return body + b'\n'
    if framing == 2: return struct.pack('>I', len(body)) + body
    return struct.pack('<I', len(body)) + body

def msgpack(v):
    # Enough of MessagePack for the seeds: nil, bool, int, str, array, map.
    if v is None: return b'\xc0'
    if v is True: return b'\xc3'
    if v is False: return b'\xc2'
    if isinstance(v, int):
        if 0 <= v < 128: return bytes([v])
        if -32 <= v < 0: return struct.pack('b', v)
        return b'\xd3' + struct.pack('>q', v)
    if isinstance(v, float): return b'\xcb' + struct.pack('>d', v)
    if isinstance(v, str):
        b = v.encode()
        return (bytes([0xa0 | len(b)]) if len(b) < 32 else b'\xd9' + bytes([len(b)])) + b
    if isinstance(v, list):
        return bytes([0x90 | len(v)]) + b''.join(msgpack(x) for x in v)
    if isinstance(v, dict):
        return bytes([0x80 | len(v)]) + b''.join(msgpack(k) + msgpack(x) for k, x in v.items())
    raise TypeError(v)

MESSAGES = [
    {"jsonrpc": "2.0", "method": "subtract", "params": [42, 23], "id": 1},
    {"jsonrpc": "2.0", "method": "subtract", "params": {"subtrahend": 23, "minuend": 42}, "id": "a"},
    {"jsonrpc": "2.0", "method": "update", "params": [1, 2, 3, 4, 5]},
    {"jsonrpc": "2.0", "result": 19, "id": 1},
    {"jsonrpc": "2.0", "error": {"code": -32601, "message": "Method not found"}, "id": None},
    {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 1}},
    [{"jsonrpc": "2.0", "method": "sum", "params": [1, 2, 4], "id": "1"},
     {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]}, {"foo": "boo"}],
    {"jsonrpc": "2.0", "method": "echo", "params": [[[[1.5e3, "\u00e9\U0001F600", True, None]]]], "id": 1.50},
]
TEXTS = [json.dumps(m, ensure_ascii=False).encode() for m in MESSAGES] + [
    b'{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]', b'[]', b'[1,2,3]',
    b'{"jsonrpc":"2.0","method":"x","id":123456789012345678901234}', b'"\\ud800"', b'1e400']

# fuzz_codec: [selector][frame]; bit 0 = MessagePack, bits 1-4 depth, 5-7 batch.
for i, t in enumerate(TEXTS):
    put('fuzz_codec', 'json-%02d' % i, bytes([0xFE]) + t)
for i, m in enumerate(MESSAGES):
    put('fuzz_codec', 'msgpack-%02d' % i, bytes([0xFF]) + msgpack(m))
put('fuzz_codec', 'shallow', bytes([0x02]) + TEXTS[7])

# fuzz_framing: [selector][n][n bytes]...; selector bits 0-1 framing, 2-4 max_frame, 5-7 max_header.
def chunks(stream, n):
    out = b''
    for i in range(0, len(stream), n):
        c = stream[i:i + n]
        out += bytes([len(c) - 1]) + c
    return out
for f in range(4):
    stream = b''.join(frame(f, t) for t in TEXTS[:4])
    put('fuzz_framing', 'f%d-whole' % f, bytes([f | (7 << 2) | (7 << 5)]) + chunks(stream, 128))
    put('fuzz_framing', 'f%d-split' % f, bytes([f | (7 << 2) | (7 << 5)]) + chunks(stream, 3))
    put('fuzz_framing', 'f%d-small' % f, bytes([f | (3 << 2) | (2 << 5)]) + chunks(stream, 17))
put('fuzz_framing', 'lsp-headers', bytes([0 | (7 << 2) | (7 << 5)]) + chunks(
    b'Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: 2\r\n\r\n{}'
    b'Content-Length: x\r\n\r\nContent-Length: 99999999999\r\n\r\n', 64))
# A zstd frame of a 254-byte request without its magic number: fuzz_framing
# puts the magic in front of every frame (docs/framing.md Z3), so this one
# decompresses and its mutations reach the zstd decoder's frame checks.
ZSTD_BODY = bytes.fromhex('045805020084037b226a736f6e727063223a22322e30222c226d6574686f64223a226563686f222c'
                          '22706172616d73223a5b226162225d2c226964223a317d01001e46b932b0ccc512')
put('fuzz_framing', 'zstd-frame', bytes([2 | (7 << 2) | (7 << 5)]) + chunks(frame(2, ZSTD_BODY), 128))

# fuzz_peer: [selector][op, arg]...; raw mode (bit 3) is the byte stream itself.
ops = bytes([0, 2, 1, 3, 2, 1, 3, 5, 0, 1, 1, 0, 1, 2, 0, 4, 1, 4, 2, 5, 1, 6, 1, 7, 30,
             8, 5, 9, 0, 12, 0x35, 13, 0x09, 12, 0x21, 12, 0x5a, 13, 0x1b, 10, 12]) + b'{"jsonrpc":' + bytes([11, 3]) + b'[1]' + bytes([7, 200])
for f in range(4):
    for codec in (0, 4):
        if f == 1 and codec: continue
        put('fuzz_peer', 'ops-f%d-c%d' % (f, codec), bytes([f | codec | (1 << 4)]) + ops)
        body = b''.join(frame(f, msgpack(m) if codec else t) for m, t in zip(MESSAGES, TEXTS))
        put('fuzz_peer', 'raw-f%d-c%d' % (f, codec), bytes([f | codec | 8 | (3 << 4)]) + body)
