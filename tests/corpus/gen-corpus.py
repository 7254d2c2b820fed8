#!/usr/bin/env python3
"""Writes the decoding corpus: C sources of test cases for tests/test-corpus.c.

Each case is one function signature: the C types it uses, a known value
for every argument and for the result (static constants, deterministic
from the seed), a target function that returns the result, and a runner
that passes the arguments to probe_enter and probe_leave through function
pointers of the case's exact prototype, so the C compiler places every
value where the ABI says.  The harness registers the signature, lets the
library decode the values and compares them byte for byte.

    gen-corpus.py --seed N --count N --out DIR

writes DIR/corpus-1.c .. DIR/corpus-PARTS.c (fixed names: the build lists
them).  The same seed and count give the same files, on any host: nothing
here depends on the ABI, which is the C compiler's business.  Cases that
need __int128 are guarded by #ifdef __SIZEOF_INT128__, and async cases
returning a 16-byte vector by CORPUS_ASYNC_VECTOR16_RESULT (corpus.h);
every other case is valid C for every ABI.
"""
import argparse
import os
import random
import sys

PARTS = 6

# Scalar codes of the signature language (doc/signature.md), their C type,
# and how to make a value of them.
INT_RANGES = {
    'b': ('int8_t', -128, 127), 'B': ('uint8_t', 0, 255),
    'h': ('int16_t', -32768, 32767), 'H': ('uint16_t', 0, 65535),
    'i': ('int32_t', -2**31, 2**31 - 1), 'I': ('uint32_t', 0, 2**32 - 1),
    'l': ('int64_t', -2**63, 2**63 - 1), 'L': ('uint64_t', 0, 2**64 - 1),
}
SCALAR_CTYPE = dict((k, v[0]) for k, v in INT_RANGES.items())
SCALAR_CTYPE.update({'z': '_Bool', 'c': 'char', 'p': 'void *', 'f': 'float',
                     'd': 'double', 'D': 'long double',
                     'q': '__int128', 'Q': 'unsigned __int128'})
# Every scalar an argument or member may be; __int128 rarely, so that
# most cases are valid everywhere.
SCALARS = list('zcbBhHiIlLpfdD' * 4) + ['q', 'Q']
# What a variadic argument may be: the types default argument promotions
# leave alone (no bool, char, short or float: they arrive as int/double).
VARIADIC_SCALARS = list('iIlLpdD' * 4) + ['q', 'Q']
# The largest size and alignment a scalar has on any ABI, to keep the
# aggregates near the sizes the corpus is after (about 80 bytes at most).
EST = {'z': 1, 'c': 1, 'b': 1, 'B': 1, 'h': 2, 'H': 2, 'i': 4, 'I': 4, 'f': 4,
       'l': 8, 'L': 8, 'd': 8, 'p': 8, 'q': 16, 'Q': 16, 'D': 16}
MAX_AGGREGATE = 80
VECTOR_ELEMS = {'b': 1, 'B': 1, 'h': 2, 'H': 2, 'i': 4, 'I': 4, 'l': 8, 'L': 8,
                'q': 16, 'Q': 16, 'f': 4, 'd': 8}


def int_literal(code, v):
    if code in 'lL':
        # INT64_MIN has no literal of its own
        if v == -2**63:
            return '(-INT64_C(0x7fffffffffffffff) - 1)'
        return ('INT64_C(%d)' if code == 'l' else 'UINT64_C(%d)') % v
    if code == 'i' and v == -2**31:
        return '(-0x7fffffff - 1)'
    if code == 'I':
        return '%du' % v
    return '%d' % v


class Gen:
    def __init__(self, rng, case):
        self.rng = rng
        self.case = case
        self.decls = []          # C declarations of the case's types
        self.ntypes = 0
        self.int128 = False      # the case needs __int128
        # Only some cases may use __int128, so that most are valid everywhere.
        self.allow128 = rng.random() < 0.3
        # The member each union value initialises, appended as values are
        # made: a value's unions in the order test-corpus.c's same_value
        # walks them (members, array elements, each union before what
        # its member holds).
        self.union_members = []

    # --- values -------------------------------------------------------------
    def scalar_value(self, code):
        r = self.rng
        if code == 'z':
            return str(r.randint(0, 1))
        if code == 'c':
            return str(r.randint(1, 127))  # plain char: signed or not, same value
        if code in INT_RANGES:
            ctype, lo, hi = INT_RANGES[code]
            # small values and extremes as well as anything
            pick = r.random()
            if pick < 0.1:
                v = r.choice([lo, hi, 0, 1])
            elif pick < 0.3:
                v = r.randint(max(lo, -100), min(hi, 100))
            else:
                v = r.randint(lo, hi)
            return int_literal(code, v)
        if code in 'qQ':
            self.int128 = True
            hi = r.getrandbits(64)
            lo = r.getrandbits(64)
            return ('(%s)(((unsigned __int128)UINT64_C(%d) << 64) | UINT64_C(%d))'
                    % (SCALAR_CTYPE[code], hi, lo))
        if code == 'p':
            # below 2^31: the same value on 32-bit targets
            return '(void *)(uintptr_t)0x%x' % r.randint(1, 2**31 - 1)
        # Real numbers with a short exact binary form: no NaN, no
        # denormal, nothing a load into an x87 or FP register changes.
        if code == 'f':
            return '%sf' % self.real(12, 4)
        if code == 'd':
            return self.real(40, 10)
        if code == 'D':
            return '%sL' % self.real(50, 12)
        raise ValueError(code)

    def real(self, bits, frac):
        r = self.rng
        v = r.randint(-(2**bits), 2**bits) / float(2**frac)
        return repr(v) if r.random() < 0.9 else repr(r.choice([0.0, -0.0, 1.0, -1.5]))

    # --- types --------------------------------------------------------------
    # A type is a tuple (sig, ctype, value_fn, needs_typedef) where value_fn
    # makes a C initializer.

    def new_name(self, prefix):
        self.ntypes += 1
        return 'c%d_%s%d' % (self.case, prefix, self.ntypes)

    def pick(self, codes):
        """One of `codes`, __int128 only where the case allows it."""
        while True:
            code = self.rng.choice(codes)
            if code not in 'qQ' or self.allow128:
                return code

    def scalar(self, code):
        if code in 'qQ':
            self.int128 = True
        return (code, SCALAR_CTYPE[code], lambda: self.scalar_value(code),
                (EST[code], EST[code]))

    def complex(self, e=None):
        e = e or self.rng.choice('fdD')
        ctype = '_Complex ' + SCALAR_CTYPE[e]
        return ('C' + e, ctype,
                lambda: '__builtin_complex((%s)%s, (%s)%s)' % (
                    SCALAR_CTYPE[e], self.scalar_value(e),
                    SCALAR_CTYPE[e], self.scalar_value(e)),
                (2 * EST[e], EST[e]))

    def vector(self):
        """A GCC vector of 8 or 16 bytes."""
        r = self.rng
        while True:
            e = self.pick(list('bBhHiIlLfd' * 4) + ['q', 'Q'])
            size = r.choice([8, 16])
            if VECTOR_ELEMS[e] <= size:
                break
        count = size // VECTOR_ELEMS[e]
        if e in 'qQ':
            self.int128 = True
        name = self.new_name('vec')
        self.decls.append('typedef %s %s __attribute__((vector_size(%d)));'
                          % (SCALAR_CTYPE[e], name, size))
        return ('V%d%s' % (count, e), name,
                lambda: '{ %s }' % ', '.join(self.scalar_value(e) for _ in range(count)),
                (size, size))

    def member_type(self, depth):
        r = self.rng
        pick = r.random()
        if depth < 2 and pick < 0.15:
            return self.aggregate(depth + 1)
        if pick < 0.22:
            return self.complex()
        if pick < 0.28:
            return self.vector()
        return self.scalar(self.pick(SCALARS))

    def aggregate(self, depth=0, union=None, members=None, packed=None):
        """A struct or union of random members (or of `members`, a list of
        (type, dims))."""
        r = self.rng
        if union is None:
            union = r.random() < 0.2
        if packed is None:
            packed = r.random() < 0.15
        if members is None:
            # retried until it is small enough
            while True:
                mark = (len(self.decls), self.int128)
                t = self.aggregate(depth, union, self.random_members(depth, union), packed)
                if t[3][0] <= MAX_AGGREGATE:
                    return t
                del self.decls[mark[0]:]
                self.int128 = mark[1]
        return self.make_aggregate(union, packed, members)

    def random_members(self, depth, union):
        r = self.rng
        if True:
            n = r.choice([0] + [1, 2, 3, 4, 5, 6] * 6 if depth == 0 else [1, 2, 3])
            members = []
            for _ in range(n):
                t = self.member_type(depth)
                dims = []
                if r.random() < 0.15:
                    dims.append(r.randint(1, 5))
                    if r.random() < 0.2:
                        dims.append(r.randint(1, 3))
                members.append((t, dims))
        # A union that holds a long double gets a member without one, the
        # one its value sets (make_aggregate): the 6 bytes after x87's 10
        # are padding the compiler need not copy, yet another member's value.
        if union and members and all('D' in t[0] for t, _ in members):
            members.append((self.scalar('l'), []))
        return members

    def make_aggregate(self, union, packed, members):
        name = self.new_name('u' if union else 's')
        lines = []
        sig = []
        for i, (t, dims) in enumerate(members):
            lines.append('\t%s m%d%s;' % (t[1], i, ''.join('[%d]' % d for d in dims)))
            sig.append(t[0] + ''.join('[%d]' % d for d in dims))
        attr = ' __attribute__((packed))' if packed else ''
        kw = 'union' if union else 'struct'
        self.decls.append('%s%s %s {\n%s\n};' % (kw, attr, name, '\n'.join(lines))
                          if lines else '%s%s %s {};' % (kw, attr, name))
        # the layout of the largest ABI, for the size limit only
        size, align = 0, 1
        for t, dims in members:
            n = t[3][0]
            for d in dims:
                n *= d
            a = 1 if packed else t[3][1]
            at = 0 if union else (size + a - 1) // a * a
            size = max(size, at + n)
            align = max(align, a)
        size = (size + align - 1) // align * align
        open_, close = ('<', '>') if union else ('{', '}')
        signature = ('!' if packed else '') + open_ + ' '.join(sig) + close

        def array_value(t, dims):
            if not dims:
                return t[2]()
            return '{ %s }' % ', '.join(array_value(t, dims[1:]) for _ in range(dims[0]))

        def value():
            if not members:
                return '{}'
            if union:
                # Not a long double member when another will do: the
                # 6 bytes after its 10 on x87 are padding the compiler
                # need not copy, yet another member's value.
                plain = [i for i, (t, _) in enumerate(members) if 'D' not in t[0]]
                i = self.rng.choice(plain or list(range(len(members))))
                self.union_members.append(i)
                return '{ .m%d = %s }' % (i, array_value(*members[i]))
            return '{ %s }' % ', '.join(array_value(t, d) for t, d in members)
        return (signature, '%s %s' % (kw, name), value, (size, align))

    def sized_struct(self, size):
        """A struct of exactly `size` bytes on every ABI: members of 1, 2
        and 4 bytes (aligned alike everywhere), the rest bytes."""
        r = self.rng
        aligns = [a for a in (1, 2, 4) if size % a == 0]
        align = r.choice(aligns)
        pool = {1: 'bBzc', 2: 'bBhH', 4: 'bBhHiIf'}[align]
        members, offset = [], 0
        big = {1: 'B', 2: 'h', 4: r.choice('iIf')}[align]
        while True:
            code = big if not members else r.choice(pool)
            n = {'b': 1, 'B': 1, 'z': 1, 'c': 1, 'h': 2, 'H': 2}.get(code, 4)
            at = (offset + n - 1) // n * n
            if at + n > size:
                break
            dims = []
            if r.random() < 0.2 and at + 2 * n <= size:
                dims = [r.randint(2, (size - at) // n)]
            members.append((self.scalar(code), dims))
            offset = at + n * (dims[0] if dims else 1)
        if offset < size:
            members.append((self.scalar('B'), [size - offset] if size - offset > 1 else []))
        return self.make_aggregate(False, False, members)

    def homogeneous(self):
        """Float or double aggregates of 1 to 4 members (the HFA of ARM and
        PowerPC, the FP structs of RISC-V), sometimes spoiled by one member of
        another type, sometimes nested or as an array."""
        r = self.rng
        e = r.choice('fdfdD')
        n = r.randint(1, 4)
        shape = r.random()
        if shape < 0.2 and n > 1:
            members = [(self.scalar(e), [n])]
        elif shape < 0.35 and n > 1:
            inner = self.make_aggregate(False, False, [(self.scalar(e), [])] * (n - 1))
            members = [(inner, []), (self.scalar(e), [])]
        else:
            members = [(self.scalar(e), [])] * n
        if r.random() < 0.3:
            members = list(members)
            members[r.randrange(len(members))] = (
                self.scalar(r.choice([c for c in 'fdiblz' if c != e])), [])
        return self.make_aggregate(r.random() < 0.1, False, members)

    def value_type(self, variadic=False):
        r = self.rng
        pick = r.random()
        if variadic:
            if pick < 0.55:
                return self.scalar(self.pick(VARIADIC_SCALARS))
            if pick < 0.65:
                return self.complex()
            if pick < 0.7:
                return self.vector()
            if pick < 0.85:
                return self.homogeneous()
            t = self.aggregate()
            return t if t[0] not in ('{}', '<>', '!{}', '!<>') else self.scalar('i')
        if pick < 0.45:
            return self.scalar(self.pick(SCALARS))
        if pick < 0.52:
            return self.complex()
        if pick < 0.6:
            return self.vector()
        if pick < 0.72:
            return self.homogeneous()
        if pick < 0.8:
            return self.sized_struct(r.randint(1, 80))
        return self.aggregate()


def make_case(rng, number, forced_size=None):
    g = Gen(rng, number)
    r = rng
    # the result
    pick = r.random()
    sized_result = forced_size is not None and r.random() < 0.5
    if sized_result:
        ret = g.sized_struct(forced_size)
    elif pick < 0.15:
        ret = ('v', 'void', None, (0, 1))
    else:
        ret = g.value_type()
    # the arguments: mostly few, often enough to run out of registers
    pick = r.random()
    if pick < 0.4:
        n = r.randint(0, 4)
    elif pick < 0.7:
        n = r.randint(5, 10)
    else:
        n = r.randint(11, 24)
    params = [g.value_type() for _ in range(n)]
    if forced_size is not None and not sized_result:
        params.insert(r.randint(0, len(params)), g.sized_struct(forced_size))
    variadic = []
    if r.random() < 0.12 and params:
        variadic = [g.value_type(True) for _ in range(r.randint(0, 6))]
    # hidden parameters: this first, the continuation anywhere before "..."
    this = r.random() < 0.06
    k_at = r.randint(0, len(params)) if r.random() < 0.08 else None
    return g, ret, params, variadic, this, k_at


def emit_case(out, number, case):
    g, ret, params, variadic, this, k_at = case
    # The parameter list as passed: T first, K where it goes.
    passed = []   # (sig, ctype, expr, reported)
    values = []   # (type, name of its static value): the reported ones
    if this:
        name = 'c%d_this' % number
        passed.append(('T', 'void *', name, True))
        values.append((('T', 'void *', lambda: '(void *)(uintptr_t)0x%x' % (0x7000 + number),
                        (8, 8)), name))
    for i, t in enumerate(params):
        passed.append((t[0], t[1], 'c%d_a%d' % (number, i), True))
        values.append((t, 'c%d_a%d' % (number, i)))
    if k_at is not None:
        passed.insert(k_at + (1 if this else 0), ('K', 'void *', '(void *)0', False))
    nfixed = len(passed)
    for i, t in enumerate(variadic):
        name = 'c%d_va%d' % (number, i)
        passed.append((t[0], t[1], name, True))
        values.append((t, name))
    sig = '%s(%s%s%s)' % (ret[0], ' '.join(p[0] for p in passed[:nfixed]),
                          ' ...' if variadic else '',
                          ''.join(' ' + p[0] for p in passed[nfixed:]))
    if variadic and nfixed == 0:
        sig = sig.replace('( ...', '(...')
    guard = g.int128
    # What the case needs of the target, as a preprocessor condition:
    # __int128, or an ABI where an async function can return a 16-byte
    # vector (corpus.h).
    needs = ['defined(__SIZEOF_INT128__)'] if guard else []
    if k_at is not None and ret[0].startswith('V') and ret[3][0] == 16:
        needs.append('CORPUS_ASYNC_VECTOR16_RESULT' +
                     ('_VARIADIC' if variadic else ''))
    condition = '#if %s\n' % ' && '.join(needs) if needs else ''
    w = out.append
    w('/* case %d: %s */' % (number, sig))
    if needs:
        w(condition.rstrip('\n'))
    for d in g.decls:
        w(d)
    # Per value, the union members its initializer set: the table lists
    # them for the arguments, then for the result.
    unions = []

    def define_value(t, name):
        g.union_members = []
        w('static %s const %s = %s;' % (t[1], name, t[2]()))
        if not g.union_members:
            unions.append('NULL')
            return
        w('static const unsigned char %s_unions[] = { %s };'
          % (name, ', '.join(str(i) for i in g.union_members)))
        unions.append('%s_unions' % name)

    for t, name in values:
        define_value(t, name)
    rtype = ret[1]
    # The target of a variadic case is variadic too: some ABIs return
    # differently from a variadic function (arm-vfp: in core registers).
    # It never reads its arguments.
    target = ('c%d_target(int unused, ...)\n{\n\t(void)unused;\n' % number
              if variadic else 'c%d_target(void)\n{\n' % number)
    if rtype != 'void':
        define_value(ret, 'c%d_r' % number)
        w('static %s %s\treturn c%d_r;\n}' % (rtype, target, number))
    else:
        unions.append('NULL')
        w('static void %s}' % target)
    has_unions = unions.count('NULL') < len(unions)
    if has_unions:
        w('static const unsigned char *const c%d_unions[] = { %s };'
          % (number, ', '.join(unions)))
    proto_params = ', '.join(p[1] for p in passed[:nfixed])
    if variadic:
        proto_params += ', ...' if proto_params else '...'
    proto = '%s (*)(%s)' % (rtype, proto_params or 'void')
    args = ', '.join(p[2] for p in passed)
    w('static void c%d_run(void)\n{' % number)
    if rtype != 'void':
        w('\t%s got;\n' % rtype)
    # Enter: the result of the probe is garbage and not used.  A probe
    # that must know how the callee returns (i386 pops a hidden result
    # pointer) calls the target named by CORPUS_ENTER_TARGET (corpus.h).
    w('\tprobe_target = (void (*)(void))c%d_target;' % number)
    w('\tCORPUS_ENTER_TARGET(probe_target);')
    w('\tPROBE_AS(%s, probe_enter)(%s);' % (proto, args))
    w('\tCORPUS_ENTER_TARGET(NULL);')
    if rtype != 'void':
        w('\tgot = PROBE_AS(%s, probe_leave)(%s);' % (proto, args))
        w('\tcorpus_received(&got);')
    else:
        w('\tPROBE_AS(%s, probe_leave)(%s);' % (proto, args))
    w('}')
    if values:
        w('static const void *const c%d_args[] = { %s };'
          % (number, ', '.join('&' + n for _, n in values)))
    if needs:
        w('#endif')
    w('')
    entry = condition + \
        '\t{ %d, "%s", %d, %d, %s, %s, %s, c%d_run },' % (
            number, sig, k_at is not None, len(values),
            'c%d_args' % number if values else 'NULL',
            '&c%d_r' % number if rtype != 'void' else 'NULL',
            'c%d_unions' % number if has_unions else 'NULL',
            number) + \
        ('\n#endif' if needs else '')
    return entry, guard


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--count', type=int, default=1200)
    ap.add_argument('--out', default='.')
    args = ap.parse_args()

    rng = random.Random(args.seed)
    os.makedirs(args.out, exist_ok=True)
    per_part = (args.count + PARTS - 1) // PARTS
    number = 0
    guarded = 0
    for part in range(1, PARTS + 1):
        out = ['/* Generated by tests/corpus/gen-corpus.py --seed %d --count %d:'
               % (args.seed, args.count),
               ' * part %d of %d.  Do not edit; change the generator. */' % (part, PARTS),
               '#include "corpus.h"', '']
        entries = []
        for _ in range(per_part):
            if number >= args.count:
                break
            number += 1
            # the first 80 cases pass (or return) a struct of each size
            forced = number if number <= 80 else None
            entry, guard = emit_case(out, number, make_case(rng, number, forced))
            guarded += guard
            entries.append(entry)
        out.append('const struct corpus_case corpus_cases_%d[] = {' % part)
        out.extend(entries)
        out.append('\t{ 0, NULL, 0, 0, NULL, NULL, NULL, NULL }')
        out.append('};')
        if part == 1:
            out.append('const unsigned long corpus_seed = %d;' % args.seed)
        path = os.path.join(args.out, 'corpus-%d.c' % part)
        with open(path + '.tmp', 'w') as f:
            f.write('\n'.join(out) + '\n')
        os.replace(path + '.tmp', path)
    sys.stderr.write('gen-corpus: %d cases (%d need __int128) in %s\n'
                     % (number, guarded, args.out))


if __name__ == '__main__':
    main()
