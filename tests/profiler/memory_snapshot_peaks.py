#!/usr/bin/env python3
"""Independent reading of a PyTorch memory snapshot (Python's own pickle module): per device,
the allocated and reserved bytes at the end (the segments), their values before the recorded
history (the end minus every change the history records) and their peaks over it.
allocated changes at alloc (+) and free_requested (-) (free/free_completed in histories
without free_requested); reserved at segment_alloc/segment_map
(+) and segment_free/segment_unmap (-). Prints JSON: {"DEVICE": {...}}."""
import gzip, json, pickle, sys

def load(path):
    with open(path, 'rb') as f:
        data = f.read()
    if data[:2] == b'\x1f\x8b':
        data = gzip.decompress(data)
    return pickle.loads(data)

def peaks(snapshot):
    out = {}
    final = {}
    for seg in snapshot.get('segments', []):
        d = final.setdefault(seg['device'], [0, 0])
        d[0] += seg['allocated_size']
        d[1] += seg['total_size']
    traces = snapshot.get('device_traces', [])
    for dev in sorted(set(final) | {i for i, t in enumerate(traces) if t}):
        alloc_end, reserved_end = final.get(dev, [0, 0])
        da, dr = [], []
        trace = traces[dev] if dev < len(traces) else []
        # Histories without free_requested (older PyTorch: 'free', or free_completed alone)
        # give the block back at their free event.
        free = 'free_requested' if any(e['action'] == 'free_requested' for e in trace) else None
        for e in trace:
            a = e['action']
            if a == 'alloc': da.append(e['size'])
            elif a == free or (free is None and a in ('free', 'free_completed')): da.append(-e['size'])
            if a in ('segment_alloc', 'segment_map'): dr.append(e['size'])
            elif a in ('segment_free', 'segment_unmap'): dr.append(-e['size'])
        def walk(end, deltas):
            cur = end - sum(deltas)
            start, peak = cur, cur
            for x in deltas:
                cur += x
                peak = max(peak, cur)
            return start, peak
        a0, ap = walk(alloc_end, da)
        r0, rp = walk(reserved_end, dr)
        out[str(dev)] = {'events': len(traces[dev]) if dev < len(traces) else 0,
                         'allocated_end': alloc_end, 'allocated_start': a0, 'allocated_peak': ap,
                         'reserved_end': reserved_end, 'reserved_start': r0, 'reserved_peak': rp}
    return out

if __name__ == '__main__':
    print(json.dumps({p: peaks(load(p)) for p in sys.argv[1:]}, indent=1, sort_keys=True))
