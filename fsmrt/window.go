package fsmrt

// DefaultWindow is how many history records and idempotency keys a machine keeps in memory
// unless told otherwise; older ones are in its store's event log.
const DefaultWindow = 1000

// Window keeps the last records added, at most Size (DefaultWindow when Size is 0). Adding
// costs amortised constant time: the records are moved down once the slice holds twice
// the size.
type Window[T any] struct {
	items []T
	size  int
}

// SetSize sets how many records the window keeps (DefaultWindow when n <= 0), dropping the
// oldest ones past it. Growing the window does not bring back records already dropped.
func (w *Window[T]) SetSize(n int) {
	if n <= 0 {
		n = DefaultWindow
	}
	// The slice may hold up to twice the old size: only the last Len records are kept.
	if keep := min(w.Len(), n); keep < len(w.items) {
		w.items = append(w.items[:0], w.items[len(w.items)-keep:]...)
	}
	w.size = n
}

// Size returns how many records the window keeps.
func (w *Window[T]) Size() int {
	if w.size <= 0 {
		return DefaultWindow
	}
	return w.size
}

// Add appends x, dropping the oldest record past the size.
func (w *Window[T]) Add(x T) {
	w.items = append(w.items, x)
	if n := w.Size(); len(w.items) >= 2*n {
		w.items = append(w.items[:0], w.items[len(w.items)-n:]...)
	}
}

// Items returns a copy of the records kept, oldest first.
func (w *Window[T]) Items() []T {
	n := min(len(w.items), w.Size())
	return append([]T(nil), w.items[len(w.items)-n:]...)
}

// Len returns how many records the window holds.
func (w *Window[T]) Len() int { return min(len(w.items), w.Size()) }

// Reset empties the window; its size stays.
func (w *Window[T]) Reset() { w.items = w.items[:0] }

// KeyWindow remembers what the last idempotency keys used (at most Size, DefaultWindow when
// 0) led to; the machine's store remembers the others (Store.FindKey).
type KeyWindow[R any] struct {
	recs  map[string]R
	order []string // the keys, oldest first, as a ring once full
	next  int      // the ring's oldest key once full
	size  int
	// forgot: a key was dropped past the size. gone holds every key dropped, so that a
	// key it does not hold is known never to have been used.
	forgot bool
	gone   keyFilter
}

// SetSize sets how many keys the window keeps (DefaultWindow when n <= 0), forgetting the
// oldest ones past it.
func (w *KeyWindow[R]) SetSize(n int) {
	if n <= 0 {
		n = DefaultWindow
	}
	keys := w.keys()
	old := w.recsOf(keys)
	w.recs, w.order, w.next, w.size = nil, nil, 0, n
	from := max(len(keys)-n, 0)
	w.forgot = w.forgot || from > 0
	for _, k := range keys[:from] {
		w.gone.add(k, n)
	}
	for i, k := range keys[from:] {
		w.Put(k, old[from+i])
	}
}

// recsOf returns the records of keys, in order.
func (w *KeyWindow[R]) recsOf(keys []string) []R {
	out := make([]R, len(keys))
	for i, k := range keys {
		out[i] = w.recs[k]
	}
	return out
}

// Size returns how many keys the window keeps.
func (w *KeyWindow[R]) Size() int {
	if w.size <= 0 {
		return DefaultWindow
	}
	return w.size
}

// Get returns what key led to, if the window holds it.
func (w *KeyWindow[R]) Get(key string) (R, bool) {
	r, ok := w.recs[key]
	return r, ok
}

// Put remembers what key led to, forgetting the oldest key past the size.
func (w *KeyWindow[R]) Put(key string, r R) {
	if w.recs == nil {
		w.recs = map[string]R{}
	}
	if _, ok := w.recs[key]; ok {
		w.recs[key] = r
		return
	}
	w.recs[key] = r
	if len(w.order) < w.Size() {
		w.order = append(w.order, key)
		return
	}
	delete(w.recs, w.order[w.next])
	w.forgot = true
	w.gone.add(w.order[w.next], len(w.order))
	w.order[w.next] = key
	w.next = (w.next + 1) % len(w.order)
}

// Len returns how many keys the window holds.
func (w *KeyWindow[R]) Len() int { return len(w.recs) }

// MayHaveForgotten reports whether key may be one the window dropped: false means it never
// held key (if it does not hold it now, key was never used as far as the window has seen).
func (w *KeyWindow[R]) MayHaveForgotten(key string) bool {
	return w.forgot && w.gone.mayHold(key)
}

// keyFilter is a Bloom filter of the keys a window dropped: no false negatives, and false
// positives (a fresh key looked up in the store for nothing) about 2% after four windows'
// worth of keys, more as it fills. It takes 32 bits per key the window keeps (at least
// 4,096), allocated on the first key dropped. Its hash is fixed, so what it answers does not
// change from run to run.
type keyFilter struct {
	bits []uint64
}

const filterProbes = 4

func (f *keyFilter) add(key string, size int) {
	if f.bits == nil {
		f.bits = make([]uint64, max(size/2, 64)) // 32 bits per key kept
	}
	h1, h2, m := f.hashes(key)
	for i := range uint64(filterProbes) {
		b := (h1 + i*h2) % m
		f.bits[b/64] |= 1 << (b % 64)
	}
}

func (f *keyFilter) mayHold(key string) bool {
	if f.bits == nil {
		return false
	}
	h1, h2, m := f.hashes(key)
	for i := range uint64(filterProbes) {
		b := (h1 + i*h2) % m
		if f.bits[b/64]&(1<<(b%64)) == 0 {
			return false
		}
	}
	return true
}

func (f *keyFilter) hashes(key string) (h1, h2, m uint64) {
	// FNV-1a, then a 64-bit finalizer (splitmix64's) to spread it over both halves.
	h := uint64(14695981039346656037)
	for i := 0; i < len(key); i++ {
		h = (h ^ uint64(key[i])) * 1099511628211
	}
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h, h>>32 | 1, uint64(len(f.bits)) * 64
}

// keys returns the keys held, oldest first.
func (w *KeyWindow[R]) keys() []string {
	return append(append([]string(nil), w.order[w.next:]...), w.order[:w.next]...)
}
