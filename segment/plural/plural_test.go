package plural

import "testing"

func TestN(t *testing.T) {
	for _, c := range []struct {
		n    int
		noun string
		want string
	}{
		{1, "entry", "1 entry"},
		{0, "entry", "0 entries"},
		{2, "batch", "2 batches"},
		{1, "open transaction", "1 open transaction"},
		{3, "open transaction", "3 open transactions"},
		{5, "index", "5 indexes"},
		{2, "key", "2 keys"},
		{1, "group", "1 group"},
		{2, "anomaly", "2 anomalies"},
		{-1, "offset", "-1 offsets"},
		{2, "process", "2 processes"},
	} {
		if got := N(c.n, c.noun); got != c.want {
			t.Errorf("N(%d, %q) = %q, want %q", c.n, c.noun, got, c.want)
		}
	}
}
