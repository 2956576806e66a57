package dumplog

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"

	"github.com/kseg/kseg/segment"
)

// indexReport gathers index verification results into the reports
// kafka-dump-log prints on stderr after all files (DumpLogSegments: the
// offset index mismatches, then TimeIndexDumpErrors.printErrors), in its
// order and wording. Files come in the order they were dumped: Kafka keeps
// them in a hash map, whose order no other program can reproduce.
type indexReport struct {
	files []string // absolute paths, first seen first
	// offset index: (indexOffset, logOffset) per file; the Java port keeps
	// them in a TreeMap in reverse order of index offset.
	mismatches map[string][][2]int64
	tsMismatch map[string][][2]int64 // (indexTimestamp, logTimestamp)
	outOfOrder map[string][][2]int64 // (indexTimestamp, previous)
	notFound   map[string][][2]int64 // (indexOffset, logOffset or -1)
	// orderSlots and notFoundSlots are the time-index entries of those
	// reports: Kafka checks the order only of entries whose batch it found.
	orderSlots, notFoundSlots map[string][]int
	// other holds kseg's own checks, which Kafka does not make (an entry
	// pointing where no batch starts, entries out of order).
	other []string
}

func (r *indexReport) add(pr *segment.IndexProblem, msg string) {
	if r.mismatches == nil {
		r.mismatches, r.tsMismatch = map[string][][2]int64{}, map[string][][2]int64{}
		r.outOfOrder, r.notFound = map[string][][2]int64{}, map[string][][2]int64{}
		r.orderSlots, r.notFoundSlots = map[string][]int{}, map[string][]int{}
	}
	abs, err := filepath.Abs(pr.Path)
	if err != nil {
		abs = pr.Path
	}
	var m map[string][][2]int64
	var e [2]int64
	switch pr.Kind {
	case segment.ProblemIndexMismatch:
		m, e = r.mismatches, [2]int64{pr.IndexOffset, pr.LogOffset}
	case segment.ProblemTimeIndexTimestamp:
		m, e = r.tsMismatch, [2]int64{pr.IndexTimestamp, pr.LogTimestamp}
	case segment.ProblemTimeIndexOrder:
		m, e = r.outOfOrder, [2]int64{pr.IndexTimestamp, pr.LogTimestamp}
		r.orderSlots[abs] = append(r.orderSlots[abs], pr.Slot)
	case segment.ProblemTimeIndexNotFound:
		m, e = r.notFound, [2]int64{pr.IndexOffset, pr.LogOffset}
		r.notFoundSlots[abs] = append(r.notFoundSlots[abs], pr.Slot)
	default:
		r.other = append(r.other, msg)
		return
	}
	if !slices.Contains(r.files, abs) {
		r.files = append(r.files, abs)
	}
	m[abs] = append(m[abs], e)
}

func (r *indexReport) absorb(o *indexReport) {
	for _, f := range o.files {
		if !slices.Contains(r.files, f) {
			r.files = append(r.files, f)
		}
	}
	for _, pair := range []struct{ to, from *map[string][][2]int64 }{
		{&r.mismatches, &o.mismatches}, {&r.tsMismatch, &o.tsMismatch},
		{&r.outOfOrder, &o.outOfOrder}, {&r.notFound, &o.notFound}} {
		if *pair.to == nil {
			*pair.to = map[string][][2]int64{}
		}
		for f, es := range *pair.from {
			(*pair.to)[f] = append((*pair.to)[f], es...)
		}
	}
	for _, pair := range []struct{ to, from *map[string][]int }{
		{&r.orderSlots, &o.orderSlots}, {&r.notFoundSlots, &o.notFoundSlots}} {
		if *pair.to == nil {
			*pair.to = map[string][]int{}
		}
		for f, es := range *pair.from {
			(*pair.to)[f] = append((*pair.to)[f], es...)
		}
	}
	r.other = append(r.other, o.other...)
}

func (r *indexReport) print(w io.Writer) {
	for _, f := range r.files {
		es := r.mismatches[f]
		if len(es) == 0 {
			continue
		}
		// TreeMap(Comparator.reverseOrder()) keyed by index offset:
		// descending, one line per index offset (the last one recorded).
		byOff := map[int64]int64{}
		var offs []int64
		for _, e := range es {
			if _, ok := byOff[e[0]]; !ok {
				offs = append(offs, e[0])
			}
			byOff[e[0]] = e[1]
		}
		slices.Sort(offs)
		slices.Reverse(offs)
		fmt.Fprintf(w, "Mismatches in :%s\n", f)
		for _, o := range offs {
			fmt.Fprintf(w, "  Index offset: %d, log offset: %d\n", o, byOff[o])
		}
	}
	for _, f := range r.files {
		if es := r.tsMismatch[f]; len(es) > 0 {
			fmt.Fprintf(w, "Found timestamp mismatch in :%s\n", f)
			for _, e := range es {
				fmt.Fprintf(w, "  Index timestamp: %d, log timestamp: %d\n", e[0], e[1])
			}
		}
	}
	for _, f := range r.files {
		var es [][2]int64
		for i, e := range r.outOfOrder[f] {
			if !slices.Contains(r.notFoundSlots[f], r.orderSlots[f][i]) {
				es = append(es, e)
			}
		}
		if len(es) > 0 {
			fmt.Fprintf(w, "Found out of order timestamp in :%s\n", f)
			for _, e := range es {
				fmt.Fprintf(w, "  Index timestamp: %d, Previously indexed timestamp: %d\n", e[0], e[1])
			}
		}
	}
	for _, f := range r.files {
		if es := r.notFound[f]; len(es) > 0 {
			fmt.Fprintln(w, "The following indexed offsets are not found in the log.")
			for _, e := range es {
				fmt.Fprintf(w, "Indexed offset: %d, found log offset: %d\n", e[0], e[1])
			}
		}
	}
	for _, m := range r.other {
		fmt.Fprintln(w, m)
	}
}
