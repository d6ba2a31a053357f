#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""promcheck: check a Prometheus text exposition (format 0.0.4) line by line.

    promcheck.py [FILE]        (stdin without FILE, or with -)
    promcheck.py --self-test   its own cases, good and bad (make unit-test)

Exit 0 and print "ok: N families, N samples" when every line is valid;
exit 1 and print one "LINE: problem" per fault otherwise. What it checks,
after the format's documentation (prometheus.io, "Exposition formats"), as
`promtool check metrics` does, without the whole prometheus package:

  - every line is a comment (# HELP / # TYPE / other #), or a sample, and
    ends with a newline (the last one too); no empty lines;
  - metric and label names match [a-zA-Z_:][a-zA-Z0-9_:]* and
    [a-zA-Z_][a-zA-Z0-9_]* (no label name starting with __);
  - label values are quoted, with only \\\\, \\" and \\n as escapes, and
    are valid UTF-8; no label repeated in a sample;
  - values are floats (or NaN, +Inf, -Inf), an optional timestamp an
    integer;
  - each family has at most one HELP and one TYPE, both before its first
    sample, TYPE one of counter gauge histogram summary untyped; a
    family's lines are not interleaved with another's;
  - a counter's name ends with _total, and only a counter's does (the
    project's rule, and the OpenMetrics convention); a counter's value is
    not negative;
  - no sample (name and label set) appears twice.
"""
import re
import sys

NAME = re.compile(r'[a-zA-Z_:][a-zA-Z0-9_:]*')
LABEL = re.compile(r'[a-zA-Z_][a-zA-Z0-9_]*')
TYPES = {'counter', 'gauge', 'histogram', 'summary', 'untyped'}
FLOAT = re.compile(r'[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$|[+-]?Inf$|NaN$')
INT = re.compile(r'-?\d+$')


def parse_labels(s, i, errs, ln):
    """Labels from s[i] == '{'; returns (dict, index after '}') or None."""
    labels = {}
    i += 1
    while True:
        while i < len(s) and s[i] == ' ':
            i += 1
        if i < len(s) and s[i] == '}':
            return labels, i + 1
        m = LABEL.match(s, i)
        if not m:
            errs.append((ln, 'bad label name at column %d' % (i + 1)))
            return None
        name = m.group(0)
        if name.startswith('__'):
            errs.append((ln, 'label name %s is reserved (__ prefix)' % name))
        i = m.end()
        if s[i:i + 2] != '="':
            errs.append((ln, 'label %s: expected ="' % name))
            return None
        i += 2
        val = []
        while True:
            if i >= len(s):
                errs.append((ln, 'label %s: unterminated value' % name))
                return None
            c = s[i]
            if c == '\\':
                nxt = s[i + 1:i + 2]
                if nxt not in ('\\', '"', 'n'):
                    errs.append((ln, 'label %s: bad escape \\%s' % (name, nxt)))
                    return None
                val.append('\n' if nxt == 'n' else nxt)
                i += 2
                continue
            if c == '"':
                i += 1
                break
            if c == '\n':
                errs.append((ln, 'label %s: raw newline in value' % name))
                return None
            val.append(c)
            i += 1
        if name in labels:
            errs.append((ln, 'label %s repeated' % name))
        labels[name] = ''.join(val)
        if i < len(s) and s[i] == ',':
            i += 1
            continue
        if i < len(s) and s[i] == '}':
            return labels, i + 1
        errs.append((ln, 'label %s: expected , or } after the value' % name))
        return None


def family_of(name, types):
    """The family a sample belongs to (histogram/summary suffixes)."""
    for suf in ('_bucket', '_sum', '_count'):
        base = name[:-len(suf)]
        if name.endswith(suf) and types.get(base) in ('histogram', 'summary'):
            return base
    return name


def check(data):
    errs = []
    try:
        text = data.decode('utf-8')
    except UnicodeDecodeError as e:
        return [(0, 'not UTF-8: %s' % e)], 0, 0
    if text and not text.endswith('\n'):
        errs.append((text.count('\n') + 1, 'the last line has no newline'))
    helps, types, seen_samples = set(), {}, set()
    sampled, done, current = set(), set(), None
    n_samples = 0
    for ln, line in enumerate(text.split('\n')[:-1] if text.endswith('\n')
                              else text.split('\n'), 1):
        if line == '':
            errs.append((ln, 'empty line'))
            continue
        if line.startswith('#'):
            parts = line.split(' ', 3)
            if len(parts) >= 2 and parts[1] in ('HELP', 'TYPE'):
                if len(parts) < 3 or not NAME.fullmatch(parts[2]):
                    errs.append((ln, '%s without a valid metric name' % parts[1]))
                    continue
                name = parts[2]
                if name in done or name in sampled and current != name:
                    errs.append((ln, 'family %s: lines not together' % name))
                if name in sampled:
                    errs.append((ln, 'family %s: %s after its first sample' % (name, parts[1])))
                if current != name and current is not None:
                    done.add(current)
                current = name
                if parts[1] == 'HELP':
                    if name in helps:
                        errs.append((ln, 'family %s: second HELP' % name))
                    helps.add(name)
                    if len(parts) == 4 and '\\' in re.sub(r'\\[\\n]', '', parts[3]):
                        errs.append((ln, 'HELP %s: bad escape' % name))
                else:
                    t = parts[3] if len(parts) == 4 else ''
                    if name in types:
                        errs.append((ln, 'family %s: second TYPE' % name))
                    if t not in TYPES:
                        errs.append((ln, 'family %s: unknown type %r' % (name, t)))
                    types[name] = t
                    if (t == 'counter') != name.endswith('_total'):
                        errs.append((ln, 'family %s: %s' % (name,
                                    'a counter\'s name must end in _total' if t == 'counter'
                                    else '_total on a %s (counters only)' % t)))
            continue
        m = NAME.match(line)
        if not m:
            errs.append((ln, 'not a comment and no metric name'))
            continue
        name, i = m.group(0), m.end()
        labels = {}
        if i < len(line) and line[i] == '{':
            r = parse_labels(line, i, errs, ln)
            if r is None:
                continue
            labels, i = r
        rest = line[i:]
        if not rest.startswith(' '):
            errs.append((ln, 'expected a space before the value'))
            continue
        fields = rest.split()
        if len(fields) not in (1, 2) or rest != ' ' + ' '.join(fields):
            errs.append((ln, 'expected "VALUE [TIMESTAMP]" after the name'))
            continue
        if not FLOAT.match(fields[0]):
            errs.append((ln, 'value %r is not a number' % fields[0]))
            continue
        if len(fields) == 2 and not INT.match(fields[1]):
            errs.append((ln, 'timestamp %r is not an integer' % fields[1]))
        fam = family_of(name, types)
        if fam in done or (current is not None and current != fam):
            errs.append((ln, 'sample of %s away from its family\'s lines' % fam))
        if current != fam and current is not None:
            done.add(current)
        current = fam
        sampled.add(fam)
        t = types.get(fam)
        if t is None and name.endswith('_total'):
            errs.append((ln, '%s: _total without TYPE counter' % name))
        if t == 'counter' and (fields[0].startswith('-') or fields[0] == 'NaN'):
            errs.append((ln, '%s: a counter cannot be %s' % (name, fields[0])))
        key = (name, tuple(sorted(labels.items())))
        if key in seen_samples:
            errs.append((ln, 'sample %s%s repeated' % (name, dict(labels))))
        seen_samples.add(key)
        n_samples += 1
    return errs, len(set(types) | helps), n_samples


GOOD = (b'# HELP a_total Things, \\\\ and \\n escaped.\n# TYPE a_total counter\n'
        b'a_total{k="q\\"\\\\\\n",l=""} 1\na_total{k="x"} 2 1700000000000\n'
        b'# TYPE g gauge\ng -1.5e3\ng{x="\xc3\xa9"} NaN\n# TYPE u untyped\nu +Inf\n'
        b'# TYPE h histogram\nh_bucket{le="1"} 1\nh_sum 1\nh_count 1\n# a comment\n')
BAD = (
    (b'# TYPE a counter\na 1\n', "must end in _total"),
    (b'# TYPE a_total gauge\na_total 1\n', "_total on a gauge"),
    (b'a_total 1\n', "_total without TYPE counter"),
    (b'# TYPE a_total counter\na_total -1\n', "cannot be -1"),
    (b'g{x="\\t"} 1\n', "bad escape"),
    (b'g{1x="a"} 1\n', "bad label name"),
    (b'g{__x="a"} 1\n', "reserved"),
    (b'g{x="a",x="b"} 1\n', "repeated"),
    (b'g{x=a} 1\n', 'expected ="'),
    (b'g{x="a} 1\n', "unterminated"),
    (b'# HELP g a \\t b\ng 1\n', "bad escape"),
    (b'g{x="a" y="b"} 1\n', "expected , or }"),
    (b'g 1 2 3\n', "VALUE [TIMESTAMP]"),
    (b'g  1\n', "VALUE [TIMESTAMP]"),
    (b'g abc\n', "not a number"),
    (b'g 1 1.5\n', "not an integer"),
    (b'g1\n', "a space before the value"),
    (b'g 1\ng 2\n', "repeated"),
    (b'g 1', "no newline"),
    (b'g 1\n\n', "empty line"),
    (b'# TYPE g gauge\n# TYPE g gauge\ng 1\n', "second TYPE"),
    (b'# HELP g x\n# HELP g y\ng 1\n', "second HELP"),
    (b'# TYPE g wrong\ng 1\n', "unknown type"),
    (b'g 1\n# TYPE g gauge\n', "after its first sample"),
    (b'# TYPE g gauge\ng 1\n# TYPE h gauge\nh 1\ng{a="b"} 2\n', "away from its family"),
    (b'g{x="\xff"} 1\n', "not UTF-8"),
    (b'9g 1\n', "no metric name"),
)


def self_test():
    bad = 0
    errs, _, _ = check(GOOD)
    if errs:
        print('self-test: the good text was refused: %s' % errs)
        bad += 1
    for text, want in BAD:
        errs, _, _ = check(text)
        if not any(want in m for _, m in errs):
            print('self-test: %r: expected "%s", got %s' % (text, want, errs))
            bad += 1
    print('promcheck self-test: %d of %d cases %s' % (
        len(BAD) + 1 - bad, len(BAD) + 1, 'passed' if not bad else 'passed; FAILED'))
    return 1 if bad else 0


def main(argv):
    if argv[1:] == ['--self-test']:
        return self_test()
    path = argv[1] if len(argv) > 1 else '-'
    data = sys.stdin.buffer.read() if path == '-' else open(path, 'rb').read()
    errs, families, samples = check(data)
    for ln, msg in errs:
        print('%s:%d: %s' % (path, ln, msg))
    if errs:
        return 1
    print('ok: %d families, %d samples' % (families, samples))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
