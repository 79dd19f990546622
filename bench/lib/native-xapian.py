"""Xapian 1.4 (Debian python3-xapian), one engine of bench/compare-native.ts, in a process of its own.

    /usr/bin/python3 bench/lib/native-xapian.py <stemmer> <k1> <b> <database dir>

Protocol (the same as lib/native-node-worker.ts): one JSON request a line on stdin, one JSON reply
a line on stdout ({"error": ...} when it failed).
  {"cmd":"build","docs":<JSONL of {id, text}>,"queries":<JSON array of query texts>}
    -> {buildMs, rssGrowth, dbBytes, version}
  {"cmd":"round","ids":bool} -> {lat: us per query, wallUs, ids: top-10 ids per query | null}
  {"cmd":"ready"} -> {} (once it answers, its start-up is over and it idles until the next request)
  {"cmd":"quit"}

Index: a glass database on disk (DB_NO_SYNC: no fsync, the other engines do not write to disk
either), TermGenerator with the given Snowball stemmer and STEM_ALL (every term stored stemmed,
with positions; no unstemmed copies), no document data (Xapian docid i + 1 is line i of the
file). Build time counts the TermGenerator and add_document calls and the final commit; reading
and parsing the JSONL (batches of 1,000) is outside it. Query: the text through a TermGenerator
with the same stemmer, the OR of its terms (within-query frequency as wqf), BM25Weight(k1, k2=0,
k3=1, b, min_normlen=0.5), get_mset(0, 10): the same OR-of-analyzed-terms query the other engines
run.
"""
import json
import os
import sys
import time

import xapian

K = 10
BATCH = 1000


def rss_bytes():
    with open('/proc/self/status') as f:
        for line in f:
            if line.startswith('VmRSS:'):
                return int(line.split()[1]) * 1024
    return 0


def dir_bytes(path):
    return sum(os.path.getsize(os.path.join(root, name)) for root, _, names in os.walk(path) for name in names)


class Engine:
    def __init__(self, stemmer, k1, b, path):
        self.stem = xapian.Stem(stemmer)
        self.k1 = k1
        self.b = b
        self.path = path
        self.ids = []
        self.queries = []
        self.enquire = None
        self.qgen = None

    def term_generator(self):
        tg = xapian.TermGenerator()
        tg.set_stemmer(self.stem)
        tg.set_stemming_strategy(xapian.TermGenerator.STEM_ALL)
        return tg

    def build(self, docs_file):
        rss0 = rss_bytes()
        db = xapian.WritableDatabase(self.path, xapian.DB_CREATE_OR_OVERWRITE | xapian.DB_NO_SYNC)
        tg = self.term_generator()
        ns = 0
        with open(docs_file, encoding='utf-8') as f:
            while True:
                batch = []
                for line in f:
                    if line.strip():
                        batch.append(json.loads(line))
                    if len(batch) == BATCH:
                        break
                if not batch:
                    break
                t = time.perf_counter_ns()
                for d in batch:
                    doc = xapian.Document()
                    tg.set_document(doc)
                    tg.index_text(d['text'])
                    db.add_document(doc)
                ns += time.perf_counter_ns() - t
                self.ids.extend(d['id'] for d in batch)
        t = time.perf_counter_ns()
        db.commit()
        ns += time.perf_counter_ns() - t
        db.close()
        rss_growth = rss_bytes() - rss0
        self.enquire = xapian.Enquire(xapian.Database(self.path))
        self.enquire.set_weighting_scheme(xapian.BM25Weight(self.k1, 0, 1, self.b, 0.5))
        self.qgen = self.term_generator()
        return {'buildMs': ns / 1e6, 'rssGrowth': rss_growth, 'dbBytes': dir_bytes(self.path), 'version': xapian.version_string()}

    def search(self, text):
        qdoc = xapian.Document()
        self.qgen.set_document(qdoc)
        self.qgen.index_text_without_positions(text)
        terms = [xapian.Query(t.term, t.wdf) for t in qdoc.termlist()]
        if not terms:
            return []
        self.enquire.set_query(xapian.Query(xapian.Query.OP_OR, terms))
        return [self.ids[m.docid - 1] for m in self.enquire.get_mset(0, K)]

    def round(self, want_ids):
        lat = []
        ids = [] if want_ids else None
        start = time.perf_counter_ns()
        for q in self.queries:
            a = time.perf_counter_ns()
            top = self.search(q)
            lat.append((time.perf_counter_ns() - a) / 1000)
            if ids is not None:
                ids.append(top)
        return {'lat': lat, 'wallUs': (time.perf_counter_ns() - start) / 1000, 'ids': ids}


def main():
    stemmer, k1, b, path = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
    engine = Engine(stemmer, k1, b, path)
    for line in sys.stdin:
        req = json.loads(line)
        try:
            if req['cmd'] == 'build':
                with open(req['queries'], encoding='utf-8') as f:
                    engine.queries = json.load(f)
                reply = engine.build(req['docs'])
            elif req['cmd'] == 'round':
                reply = engine.round(bool(req.get('ids')))
            elif req['cmd'] == 'ready':
                reply = {}
            elif req['cmd'] == 'quit':
                break
            else:
                reply = {'error': 'unknown command %s' % req['cmd']}
        except Exception as e:  # reported to the driver, which stops the run
            reply = {'error': repr(e)}
        sys.stdout.write(json.dumps(reply) + '\n')
        sys.stdout.flush()


if __name__ == '__main__':
    main()
