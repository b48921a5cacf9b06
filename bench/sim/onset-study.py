#!/usr/bin/env python3
"""Onset study (issue 10): the path signals before each freeze of converge, labelled by the link's capacity.

Input: results.json files of `npm run bench -- --scenario cellular --compare converge --explain-freezes --path-trace`
(sim/path-trace.ts). Usage:
  onset-study.py freezes RUN.json[,RUN.json...] [--cf CF.json,...]    per-freeze table (labels, features)
  onset-study.py summary RUN.json,... [--cf CF.json,...]              features by label (medians, quartiles)
  onset-study.py detect RUN.json,... RULE                              a rule's hits before freezes and false positives

Labels use the ground truth (capacity of the main path, the one that carried most of stream 0 in the second before
the freeze); features use only what the sender sees (its estimator, its send log, the reports; the receiver-side
columns lag by a report interval plus the reverse trip, so they are read 100 ms late here).
"""
import json
import sys
from collections import defaultdict

DT = 0.1


def load(paths):
    runs = []
    for p in paths.split(','):
        for r in json.load(open(p)):
            if 'pathTrace' not in r:
                continue
            runs.append(r)
    return runs


def idx(pt, t):
    """Index of the last sample at or before t (s)."""
    k = int(round(t / DT)) - 1
    return max(0, min(len(pt['t']) - 1, k))


def mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else float('nan')


def rate(col, a, b):
    """Mbps of a kB-per-100ms column over samples [a, b)."""
    n = max(1, b - a)
    return sum(col[max(0, a):max(0, b)]) * 8 / 100 / n


def main_path(pt, k0, k1):
    tx = [sum(p['txKB'][max(0, k0):k1]) for p in pt['paths']]
    return max(range(len(tx)), key=lambda i: tx[i])


def features(pt, p, k, base_k0):
    """Sender-visible features of path p at sample k (receiver columns read one sample late)."""
    c = pt['paths'][p]
    kr = max(0, k - 1)  # the report lag
    owd_base = [x for x in c['owdMin'][max(0, k - 100):kr + 1] if x >= 0]
    owd_base = min(owd_base) if owd_base else float('nan')
    owd_now = c['owd'][kr] if c['owd'][kr] >= 0 else float('nan')
    # last 0.5 s delivered vs sent one trip earlier
    lag = max(0, int(round((owd_now if owd_now == owd_now else 50) / 100)))
    rx = sum(c['rxKB'][max(0, kr - 4):kr + 1])
    tx = sum(c['txKB'][max(0, kr - 4 - lag):max(0, kr + 1 - lag)])
    # persistence: how long (s) the OWD has been > base + 30 ms, up to now
    pers = 0
    j = kr
    while j >= 0 and c['owd'][j] >= 0 and c['owd'][j] > owd_base + 30:
        pers += 1
        j -= 1
    # persistence of the standing queue the sender sees: SRTT - min RTT > 60 ms (queuedDeliveryMs's test), s
    sqp = 0
    j = k
    while j >= 0 and c['srtt'][j] >= 0 and c['minRtt'][j] >= 0 and c['srtt'][j] - c['minRtt'][j] > 60:
        sqp += 1
        j -= 1
    # rx rate trend: last 0.5 s vs the 1 s before
    rx_now = rate(c['rxKB'], kr - 4, kr + 1)
    rx_before = rate(c['rxKB'], kr - 14, kr - 4)
    ack = c['ack'][k]
    snd = c['snd1s'][k]
    return dict(
        trend=c['trend'][k] if c['trend'][k] is not None else float('nan'),
        over=c['use'][k],
        qd=c['rtt'][k] - c['minRtt'][k] if c['rtt'][k] >= 0 and c['minRtt'][k] >= 0 else float('nan'),
        sq=c['srtt'][k] - c['minRtt'][k] if c['srtt'][k] >= 0 and c['minRtt'][k] >= 0 else float('nan'),
        owdRise=owd_now - owd_base,
        owdPers=pers * DT,
        sqPers=sqp * DT,
        loss=c['loss'][k],
        gaps=sum(c['gaps'][max(0, kr - 4):kr + 1]),
        deliv=rx / tx if tx > 0 else float('nan'),
        rxDrop=rx_now / rx_before if rx_before > 0 else float('nan'),
        ackSnd=ack / snd if snd > 0 and ack >= 0 else float('nan'),
        estAck=c['est'][k] / ack if ack > 0 else float('nan'),
        fbGap=c['fbGapMs'][k],
        jit=c['jit'][kr],
        share=c['share'][k],
        txMbps=rate(c['txKB'], k - 4, k + 1),
        **alt_features(pt, p, k),
    )


def alt_features(pt, p, k):
    """The other paths (the best of them) at sample k: longest feedback gap over the last 2 s (ms), queue delay (ms), estimate (Mbps)."""
    best = None
    for q, c in enumerate(pt['paths']):
        if q == p:
            continue
        gap = max(c['fbGapMs'][max(0, k - 19):k + 1])
        qd = c['rtt'][k] - c['minRtt'][k] if c['rtt'][k] >= 0 and c['minRtt'][k] >= 0 else float('nan')
        cand = dict(altGap=gap, altQd=qd, altEst=c['est'][k])
        if best is None or cand['altGap'] < best['altGap']:
            best = cand
    return best or dict(altGap=float('nan'), altQd=float('nan'), altEst=float('nan'))


def label(pt, p, at):
    """Ground truth of the main path around a freeze at `at` (s): fade / dip / outage / none, with the low run's length (s)."""
    c = pt['paths'][p]
    k_at = idx(pt, at)
    pre0, pre1 = idx(pt, at - 3.5), idx(pt, at - 2.0)
    demand = max(rate(c['txKB'], pre0, pre1), 0.2)
    cap_pre = mean(c['cap'][pre0:pre1])
    low = [x < demand for x in c['cap']]
    # first low sample in [at - 2.5, at + 0.3]
    s0, s1 = idx(pt, at - 2.5), idx(pt, at + 0.3)
    start = next((j for j in range(s0, s1 + 1) if low[j]), None)
    if start is None:
        gap = max(c['fbGapMs'][idx(pt, at - 2.0):k_at + 1])
        return ('fbgap' if gap > 250 else 'none'), 0.0, None, demand, cap_pre
    # the low run from there (holes of one sample allowed)
    j = start
    while j + 1 < len(low) and (low[j + 1] or (j + 2 < len(low) and low[j + 2])):
        j += 1
    dur = (j - start + 1) * DT
    first = c['cap'][start:min(j + 1, start + 10)]  # the first second of the low run
    zeros = sum(1 for x in first if x <= 0.001)
    if zeros > 0.5 * len(first):
        kind = 'outage'
    elif dur > 1.0:
        kind = 'fade'
    else:
        kind = 'dip'
    return kind, dur, pt['t'][start], demand, cap_pre


def cf_index(cf_runs):
    out = {}
    for r in cf_runs:
        out[(r['variant'], r['seed'])] = r
    return out


def frozen_in(run, a, b):
    """ms frozen (stream 0) overlapping [a, b] s."""
    tot = 0.0
    for f in run.get('freezeCauses', []):
        s, e = f['atS'], f['atS'] + f['ms'] / 1000
        tot += max(0.0, min(b, e) - max(a, s))
    return tot * 1000


def freeze_rows(runs, cf=None):
    rows = []
    for r in runs:
        pt = r['pathTrace']
        for f in r.get('freezeCauses', []):
            at = f['atS']
            k_at = idx(pt, at)
            p = main_path(pt, idx(pt, at - 1.0), k_at + 1)
            kind, dur, onset, demand, cap_pre = label(pt, p, at)
            row = dict(pair=r['variant'], half=r.get('half', '?'), seed=r['seed'], at=at, ms=f['ms'], cause=f['cause'],
                       stuckPath=f['path'], path=p, pathName=r['paths'][p]['name'], label=kind, lowDur=dur,
                       onset=onset, demand=demand, capPre=cap_pre)
            # features at 1.0 / 0.5 s before and at the freeze start; max/min over [-2, -0.5]
            for lead in (1.0, 0.5, 0.0):
                ft = features(pt, p, idx(pt, at - lead), 0)
                for kk, v in ft.items():
                    row[f'{kk}@{lead}'] = v
            win = [features(pt, p, j, 0) for j in range(idx(pt, at - 2.0), idx(pt, at - 0.5) + 1)]
            for kk in win[0].keys():
                vals = [w[kk] for w in win if w[kk] == w[kk]]
                row[f'{kk}:max'] = max(vals) if vals else float('nan')
                row[f'{kk}:min'] = min(vals) if vals else float('nan')
            # the other path at the freeze start
            q = 1 - p if len(pt['paths']) == 2 else None
            if q is not None:
                oq = features(pt, q, idx(pt, at - 0.5), 0)
                row['otherEst'] = pt['paths'][q]['est'][idx(pt, at - 0.5)]
                row['otherCap'] = mean(pt['paths'][q]['cap'][k_at:k_at + 10])
                row['otherQd'] = oq['qd']
            if cf is not None:
                c = cf.get((r['variant'], r['seed']))
                if c is not None:
                    row['cfMs'] = frozen_in(c, at - 0.5, at + f['ms'] / 1000 + 0.5)
                    row['baseMs'] = frozen_in(r, at - 0.5, at + f['ms'] / 1000 + 0.5)
            rows.append(row)
    return rows


def fmt(x, n=2):
    if isinstance(x, float):
        if x != x:
            return '-'
        return f'{x:.{n}f}'
    return str(x)


def quart(xs):
    xs = sorted(x for x in xs if x == x)
    if not xs:
        return '-'
    q = lambda f: xs[min(len(xs) - 1, int(f * (len(xs) - 1) + 0.5))]
    return f'{q(0.25):.2f} / {q(0.5):.2f} / {q(0.75):.2f}'


def cmd_freezes(args):
    runs = load(args[0])
    cf = cf_index(load(args[args.index('--cf') + 1])) if '--cf' in args else None
    rows = freeze_rows(runs, cf)
    cols = ['pair', 'seed', 'at', 'ms', 'cause', 'pathName', 'label', 'lowDur', 'demand', 'capPre',
            'owdRise@1.0', 'owdRise@0.5', 'owdPers@0.5', 'trend@0.5', 'qd@0.5', 'loss@0.5', 'deliv@0.5', 'rxDrop@0.5',
            'fbGap:max', 'estAck@0.5', 'otherEst', 'otherCap', 'cfMs', 'baseMs']
    print('| ' + ' | '.join(cols) + ' |')
    print('|' + ' --- |' * len(cols))
    for row in sorted(rows, key=lambda r: (r['pair'], r['seed'], r['at'])):
        print('| ' + ' | '.join(fmt(row.get(c, float('nan'))) for c in cols) + ' |')


def cmd_summary(args):
    runs = load(args[0])
    cf = cf_index(load(args[args.index('--cf') + 1])) if '--cf' in args else None
    rows = freeze_rows(runs, cf)
    groups = defaultdict(list)
    for r in rows:
        groups[r['label']].append(r)
    keys = [k for k in rows[0].keys() if '@' in k or ':' in k]
    print('freezes per label: ' + ', '.join(f'{g} {len(v)} ({sum(x["ms"] for x in v) / 1000:.1f} s)' for g, v in groups.items()))
    print('| feature | ' + ' | '.join(f'{g} (n={len(groups[g])})' for g in groups) + ' |')
    print('|---|' + '---|' * len(groups))
    for k in keys:
        print(f'| {k} | ' + ' | '.join(quart([r[k] for r in groups[g]]) for g in groups) + ' |')


RULE_HELP = 'a Python expression over the features of a path at a tick (e.g. "owdRise > 80 and owdPers >= 0.5")'


def cmd_detect(args):
    runs = load(args[0])
    rule = compile(args[1], 'rule', 'eval')
    min_share = float(args[2]) if len(args) > 2 and not args[2].startswith('--') else 20
    rows = freeze_rows(runs)
    by_run = defaultdict(list)
    for r in rows:
        by_run[(r['pair'], r['seed'])].append(r)
    hits = defaultdict(lambda: [0, 0])  # label -> [fired before, total]
    fp_eps = 0
    fp_pair = defaultdict(int)
    ticks = 0
    fp_ticks = [0]
    call_s = 0
    for r in runs:
        pt = r['pathTrace']
        fz = by_run[(r['variant'], r['seed'])]
        n = len(pt['t'])
        call_s += n * DT
        fired = [[False] * n for _ in pt['paths']]
        for p in range(len(pt['paths'])):
            for k in range(20, n):
                ft = features(pt, p, k, 0)
                if ft['share'] < min_share:
                    continue
                try:
                    ok = bool(eval(rule, {}, ft))
                except (ZeroDivisionError, TypeError):
                    ok = False
                fired[p][k] = ok
        # freezes: fired on its main path in [at - 2.5, at - 0.2]
        for f in fz:
            a, b = idx(pt, f['at'] - 2.5), idx(pt, f['at'] - 0.2)
            hit = any(fired[f['path']][a:b + 1])
            for lab in (f['label'], f'{f["pair"]}:{f["label"]}' if f['pair'] in ('wc:21_2', 'mm:tmobile+att') else None):
                if lab is None:
                    continue
                hits[lab][0] += hit
                hits[lab][1] += 1
                hits['ALL:' + lab][0] += f['ms'] * hit / 1000
                hits['ALL:' + lab][1] += f['ms'] / 1000
        # ticks firing away from any freeze (not within 2.5 s before a freeze start to its end)
        near_fz = [False] * n
        for f in fz:
            for j in range(idx(pt, f['at'] - 2.5), min(n, idx(pt, f['at'] + f['ms'] / 1000) + 1)):
                near_fz[j] = True
        for p in range(len(pt['paths'])):
            for k in range(n):
                if not near_fz[k]:
                    ticks += 1
                    fp_ticks[0] += fired[p][k]
        # episodes: runs of firing on a path; a false positive when no freeze starts within 2.5 s after its start
        for p in range(len(pt['paths'])):
            k = 0
            while k < n:
                if not fired[p][k]:
                    k += 1
                    continue
                s = k
                while k < n and fired[p][k]:
                    k += 1
                t0 = pt['t'][s]
                near = any(t0 - 0.3 <= f['at'] <= t0 + 2.5 for f in fz)
                if not near:
                    fp_eps += 1
                    fp_pair[r['variant']] += 1
    if '--row' in args:
        cell = lambda lab: f"{hits[lab][0]}/{hits[lab][1]} ({hits['ALL:' + lab][0]:.1f}/{hits['ALL:' + lab][1]:.1f} s)" if lab in hits else '-'
        other_fade = [hits['fade'][0] - hits['wc:21_2:fade'][0], hits['fade'][1] - hits['wc:21_2:fade'][1]]
        other_dip = [hits['dip'][0] - hits['mm:tmobile+att:dip'][0], hits['dip'][1] - hits['mm:tmobile+att:dip'][1]]
        tm = [sum(hits[f'mm:tmobile+att:{l}'][i] for l in ('dip', 'fbgap', 'fade', 'none')) for i in (0, 1)]
        tms = [sum(hits[f'ALL:mm:tmobile+att:{l}'][i] for l in ('dip', 'fbgap', 'fade', 'none')) for i in (0, 1)]
        print(f"| `{args[1]}` | {cell('wc:21_2:fade')} | {tm[0]}/{tm[1]} ({tms[0]:.1f}/{tms[1]:.1f} s) | {other_fade[0]}/{other_fade[1]} | {other_dip[0]}/{other_dip[1]} | {fp_eps / (call_s / 60):.2f} | {100 * fp_ticks[0] / max(1, ticks):.2f} % |")
        return
    print(f'rule: {args[1]} (paths with >= {min_share} % of media)')
    for lab in sorted(k for k in hits if not k.startswith('ALL:')):
        h = hits[lab]
        m = hits['ALL:' + lab]
        print(f'  {lab:22}: fired before {h[0]}/{h[1]} freezes ({m[0]:.1f} of {m[1]:.1f} s frozen)')
    print(f'  false-positive episodes (no freeze within 2.5 s): {fp_eps} over {call_s / 60:.1f} min of calls ({fp_eps / (call_s / 60):.2f}/min)')
    print(f'  path-ticks firing away from freezes: {fp_ticks[0]} of {ticks} ({100 * fp_ticks[0] / max(1, ticks):.2f} %)')
    top = sorted(fp_pair.items(), key=lambda x: -x[1])[:6]
    print('  most: ' + ', '.join(f'{k} {v}' for k, v in top))


if __name__ == '__main__':
    cmd = sys.argv[1]
    {'freezes': cmd_freezes, 'summary': cmd_summary, 'detect': cmd_detect}[cmd](sys.argv[2:])
