#!/usr/bin/env python3
"""Attributes each CPU sample of a pprof -traces dump to one category:
walking from the leaf, the first frame that decides (GC, scheduler,
net/http, a module's package); low-level std and runtime frames (malloc,
memmove, syscalls, bufio, reflect...) are charged to the caller above them."""
import re, sys, collections
GC = {'gcBgMarkWorker','gcAssistAlloc','gcAssistAlloc1','bgsweep','bgscavenge','gcStart','gcMarkDone',
      'gcMarkTermination','deductSweepCredit','sweepone','gcDrain','gcDrainN','scanobject','scanObject','greyobject',
      'wbBufFlush','wbBufFlush1','gcWriteBarrier','markroot','gcResetMarkState','gcFlushBgCredit','gcControllerState',
      'freeSomeWbufs','gcParkAssist','scanstack','scanframeworker','tryDeferToSpanScan','finishsweep_m','gcMarkTinyAllocs',
      'gcSweep','sweepLocked','scavenge','gcWork','markBits', 'runGCProg','bulkBarrierPreWrite','typePointers'}
SCHED = {'schedule','findRunnable','park_m','goexit0','mstart','mstart0','mstart1','stopm','startm','wakep','notesleep','notewakeup',
         'futexsleep','futexwakeup','runqgrab','stealWork','netpoll','sysmon','ready','goready','gopark','goschedImpl',
         'gosched_m','exitsyscall','exitsyscall0','entersyscall','entersyscallblock','reentersyscall','newproc','newproc1','handoffp','retake',
         'injectglist','mPark','resetspinning','checkTimers','goyield','casgstatus','execute','gogo','mcall','systemstack_switch',
         'park','chanparkcommit','selparkcommit','runqput','runqsteal','netpollblock','netpollready','netpollunblock','goexit1','gfget','gfput','malg','acquirep','releasep','semrelease1','semacquire1','readyWithTime'}
SYSC = {'entersyscall','exitsyscall','reentersyscall','entersyscallblock','exitsyscallfast','exitsyscall0'}
PROF = {'mProf_Malloc','profilealloc','sigprof'}
LEAFPKG = re.compile(r'^(runtime|internal/|syscall|os|io|bufio|bytes|sync|strings|strconv|reflect|unicode|fmt|sort|context|time|math|slices|maps|errors|unique|iter|hash|container|encoding/base64|encoding/hex|encoding/binary|crypto/rand|crypto/internal|vendor/)')
def pkg(fn):
    fn = fn.replace(' (inline)','').strip()
    # package path: up to the first '.' after the last '/'
    if '.' not in fn: return 'runtime', fn  # assembly (cmpbody...)
    i = fn.rfind('/')
    j = fn.find('.', i+1)
    return fn[:j], fn[j+1:]
def rtname(rest):
    # runtime.(*unwinder).next -> next ; runtime.gcDrain -> gcDrain
    rest = re.sub(r'^\(\*?[^)]*\)\.', '', rest)
    return rest.split('.')[0]
def classify(stack):
    enc = False
    for fn in stack:
        p, rest = pkg(fn)
        if p == 'runtime' or p.startswith('internal/runtime'):
            n = rtname(rest)
            if n in GC or n.startswith('gc') and n not in ('gcWriteBarrier',) and not n.startswith('gcd') or 'sweep' in n.lower() or 'scav' in n:
                return 'runtime: GC'
            if n in PROF: return 'runtime: profiling itself'
            if n in SYSC: return 'runtime: system call entry/exit'
            if n in SCHED: return 'runtime: scheduler'
            continue
        if p == 'encoding/json':
            enc = True; continue
        if p.startswith('net/http') or p == 'net' or p.startswith('net/') or p.startswith('crypto/tls') or p=='mime' or p.startswith('vendor/golang.org/x/net'):
            return 'std: net/http (and net)'
        if LEAFPKG.match(p):
            continue
        if p.startswith('github.com/segmentio') or p.startswith('github.com/modelcontextprotocol/go-sdk/internal/json'):
            return 'go-sdk: JSON decoding (segmentio, internal/json)'
        if p.startswith('github.com/modelcontextprotocol/go-sdk'):
            if enc: return 'go-sdk: JSON encoding (encoding/json)'
            if '/jsonrpc' in p: return 'go-sdk: JSON-RPC'
            if p.endswith('/auth') or 'oauth' in p: return 'go-sdk: auth'
            return 'go-sdk: MCP (mcp package)'
        if p.startswith('github.com/google/jsonschema-go'): return 'go-sdk: jsonschema-go'
        if p.startswith('github.com/switchboard-dev/switchboard'):
            sub = p[len('github.com/switchboard-dev/switchboard'):].lstrip('/') or 'main'
            return 'ours: ' + sub + (' (encoding/json)' if enc else '')
        if p.startswith('github.com/tidwall'): return 'ours: mcp/internal/lineconn (gjson)'
        if p == 'main': return 'ours: cmd/switchboard'
        return 'other: ' + p + (' (encoding/json)' if enc else '')
    if enc: return 'std: encoding/json (no module caller)'
    return 'runtime: other'
def parse(f):
    stacks = []; cur = None
    for line in f:
        if line.startswith('-----------+'):
            if cur: stacks.append(cur)
            cur = None; continue
        m = re.match(r'^\s+([\d.]+)(ms|s|us|µs)\s+(.*)$', line)
        if m:
            v = float(m.group(1)) * {'ms':1,'s':1000,'us':0.001,'µs':0.001}[m.group(2)]
            cur = [v, [m.group(3)]]; continue
        if cur is not None and line.strip():
            cur[1].append(line.strip())
    if cur: stacks.append(cur)
    return stacks
stacks = parse(open(sys.argv[1]))
percall = float(sys.argv[2]) if len(sys.argv) > 2 else None
tot = sum(v for v, _ in stacks)
cat = collections.Counter()
for v, s in stacks: cat[classify(s)] += v
print(f'total {tot:.0f} ms of samples')
for k, v in sorted(cat.items(), key=lambda kv: -kv[1]):
    extra = f'  {v/tot*percall:7.1f} µs/call' if percall else ''
    print(f'{v/tot*100:6.1f}%  {k}{extra}')
if '-v' in sys.argv:
    for want in sys.argv[sys.argv.index('-v')+1:]:
        print('---', want)
        c2 = collections.Counter()
        for v, s in stacks:
            if classify(s) == want: c2[s[0]] += v
        for k, v in c2.most_common(15): print(f'{v:7.0f}  {k}')
if '-c' in sys.argv:
    want = sys.argv[sys.argv.index('-c')+1]
    c3 = collections.Counter()
    for v, s in stacks:
        if classify(s) == want:
            f = next((x for x in s if 'switchboard-dev' in x or 'modelcontextprotocol' in x), '?')
            c3[f] += v
    for k, v in c3.most_common(20): print(f'{v:7.0f}  {k}')
