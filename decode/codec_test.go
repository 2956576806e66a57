package decode

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/kseg/kseg/decode/decodetest/testkit"
	"github.com/pierrec/lz4/v4"
)

var allCodecs = []Compression{CompressionNone, CompressionGzip, CompressionSnappy, CompressionLZ4, CompressionZstd}

// codecMagics are the magics a codec is tested with: zstd exists only in v2.
func codecMagics(c Compression) []int8 {
	switch c {
	case CompressionZstd:
		return []int8{2}
	case CompressionLZ4:
		return []int8{0, 1, 2}
	}
	return []int8{0, 2}
}

func randomBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := 0; i < n; i += 8 {
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], r.Uint64())
		copy(b[i:], w[:])
	}
	return b
}

// jsonish is realistic record payload text: repetitive keys, varying values.
func jsonish(n int) []byte {
	r := rand.New(rand.NewPCG(7, 11))
	var b bytes.Buffer
	users := []string{"alice", "bob", "carol", "dave", "erin", "frank"}
	events := []string{"page_view", "click", "purchase", "signup", "logout"}
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, `{"id":%d,"ts":%d,"user":"%s","event":"%s","amount":%d.%02d,"session":"%016x","tags":["a%d","b%d"]}`+"\n",
			i, 1700000000000+int64(i)*37+r.Int64N(1000), users[r.IntN(len(users))], events[r.IntN(len(events))],
			r.IntN(500), r.IntN(100), r.Uint64(), r.IntN(20), r.IntN(7))
	}
	return b.Bytes()[:n]
}

func TestXXH32Vectors(t *testing.T) {
	for _, tc := range []struct {
		in   string
		seed uint32
		want uint32
	}{
		{"", 0, 0x02CC5D05},
		{"a", 0, 0x550D7456},
		{"abc", 0, 0x32D153FF},
		{"Nobody inspects the spammish repetition", 0, 0xE2293B2F},
	} {
		if got := xxh32([]byte(tc.in), tc.seed); got != tc.want {
			t.Errorf("xxh32(%q, %d) = 0x%08x, want 0x%08x", tc.in, tc.seed, got, tc.want)
		}
	}
}

// TestXXH32AgainstPierrec checks xxh32 on inputs of every length class
// against the block checksums pierrec/lz4's writer computes with its own
// xxh32: decoding verifies each one.
func TestXXH32AgainstPierrec(t *testing.T) {
	for _, n := range []int{1, 3, 4, 15, 16, 17, 31, 33, 1000, 70000} {
		src := randomBytes(n, uint64(n))
		frame := pierrecFrame(t, src, lz4.BlockChecksumOption(true))
		var c Codecs
		got, err := c.Decompress(nil, CompressionLZ4, 2, frame, 0)
		if err != nil {
			t.Fatalf("len %d: %v", n, err)
		}
		if !bytes.Equal(got, src) {
			t.Fatalf("len %d: round trip differs", n)
		}
	}
}

func pierrecFrame(t testing.TB, src []byte, opts ...lz4.Option) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := lz4.NewWriter(&buf)
	if err := w.Apply(opts...); err != nil {
		t.Fatal(err)
	}
	return writeAndClose(t, w, &buf, src)
}

// writeAndClose writes src through the stream compressor w and closes it,
// returning what w wrote into buf.
func writeAndClose(t testing.TB, w io.WriteCloser, buf *bytes.Buffer, src []byte) []byte {
	t.Helper()
	if _, err := w.Write(src); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestCodecRoundTrip(t *testing.T) {
	inputs := map[string][]byte{
		"empty":      {},
		"one":        []byte("a"),
		"small":      []byte("the quick brown fox jumps over the lazy dog"),
		"random1M":   randomBytes(1<<20, 1),
		"repeat1M":   bytes.Repeat([]byte("kafka partition segment "), (1<<20)/24+1)[:1<<20],
		"jsonish300": jsonish(300 << 10),
	}
	var c Codecs
	var comp, out []byte
	for _, codec := range allCodecs {
		for _, magic := range codecMagics(codec) {
			for name, in := range inputs {
				t.Run(fmt.Sprintf("%s/v%d/%s", codec, magic, name), func(t *testing.T) {
					var err error
					comp, err = c.Compress(comp, codec, magic, in)
					if err != nil {
						t.Fatalf("Compress: %v", err)
					}
					prev := out
					out, err = c.Decompress(out, codec, magic, comp, 4<<20)
					if err != nil {
						t.Fatalf("Decompress: %v", err)
					}
					if !bytes.Equal(out, in) {
						t.Fatalf("round trip: got %d bytes, want %d", len(out), len(in))
					}
					// dst capacity is reused when it suffices.
					if cap(prev) >= len(in) && len(in) > 0 && &prev[:1][0] != &out[:1][0] {
						t.Errorf("Decompress reallocated although dst had capacity %d for %d bytes", cap(prev), len(in))
					}
					// An exact cap is allowed, one byte less is not.
					if _, err := c.Decompress(nil, codec, magic, comp, max(len(in), 1)); err != nil {
						t.Fatalf("Decompress with cap = size: %v", err)
					}
					if len(in) > 1 {
						if _, err := c.Decompress(nil, codec, magic, comp, len(in)-1); !errors.Is(err, ErrTooLarge) {
							t.Fatalf("Decompress with cap = size-1: err = %v, want ErrTooLarge", err)
						}
					}
				})
			}
		}
	}
}

func TestCompressLZ4FrameHeader(t *testing.T) {
	var c Codecs
	for _, tc := range []struct {
		magic int8
		want  string
	}{
		{2, "04224d18604082"},
		{1, "04224d18604082"},
		{0, "04224d1860401a"},
	} {
		out, err := c.Compress(nil, CompressionLZ4, tc.magic, []byte("hello"))
		if err != nil {
			t.Fatal(err)
		}
		if got := hex.EncodeToString(out[:7]); got != tc.want {
			t.Errorf("magic %d header = %s, want %s", tc.magic, got, tc.want)
		}
		if got := hex.EncodeToString(out[len(out)-4:]); got != "00000000" {
			t.Errorf("magic %d: frame ends %s, want end mark 00000000", tc.magic, got)
		}
	}
	// Empty input: header and end mark only, as Lz4BlockOutputStream.close.
	out, _ := c.Compress(nil, CompressionLZ4, 2, nil)
	if got := hex.EncodeToString(out); got != "04224d1860408200000000" {
		t.Errorf("empty frame = %s", got)
	}
}

func TestDecompressLZ4HeaderChecksum(t *testing.T) {
	var c Codecs
	payload := []byte("magic zero frames carry the broken checksum")
	v0, _ := c.Compress(nil, CompressionLZ4, 0, payload)
	v2, _ := c.Compress(nil, CompressionLZ4, 2, payload)

	// Magic 0 ignores HC, whichever it is (Lz4BlockInputStream with
	// ignoreFlagDescriptorChecksum).
	for name, frame := range map[string][]byte{"broken HC": v0, "correct HC": v2} {
		got, err := c.Decompress(nil, CompressionLZ4, 0, frame, 0)
		if err != nil || !bytes.Equal(got, payload) {
			t.Errorf("magic 0, %s: %q, %v", name, got, err)
		}
	}
	// Magic >= 1 verifies it: the magic-0 frame fails there.
	_, err := c.Decompress(nil, CompressionLZ4, 2, v0, 0)
	assertCorrupt(t, err, ErrCRCMismatch, 6, "lz4 HC")

	bad := bytes.Clone(v2)
	bad[6] ^= 0xff
	_, err = c.Decompress(nil, CompressionLZ4, 2, bad, 0)
	assertCorrupt(t, err, ErrCRCMismatch, 6, "lz4 HC")
	_, err = c.Decompress(nil, CompressionLZ4, 1, bad, 0)
	assertCorrupt(t, err, ErrCRCMismatch, 6, "lz4 HC")
}

func assertCorrupt(t *testing.T, err, class error, pos int64, field string) {
	t.Helper()
	if !errors.Is(err, class) {
		t.Fatalf("err = %v, want %v", err, class)
	}
	ce, ok := AsCorrupt(err)
	if !ok {
		t.Fatalf("err = %T %v, want *CorruptError", err, err)
	}
	if ce.Pos != pos || ce.Field != field {
		t.Fatalf("err at %d %q, want %d %q: %v", ce.Pos, ce.Field, pos, field, err)
	}
}

func TestDecompressLZ4Blocks(t *testing.T) {
	var c Codecs
	src := randomBytes(150<<10, 3) // incompressible: three raw blocks
	frame, _ := c.Compress(nil, CompressionLZ4, 2, src)
	p := 7
	var sizes []uint32
	for {
		raw := binary.LittleEndian.Uint32(frame[p:])
		p += 4
		if raw == 0 {
			break
		}
		sizes = append(sizes, raw)
		p += int(raw &^ lz4Incompressible)
	}
	if p != len(frame) {
		t.Fatalf("frame has %d bytes after the end mark", len(frame)-p)
	}
	want := []uint32{0x80010000, 0x80010000, 0x80000000 | 22<<10}
	if fmt.Sprint(sizes) != fmt.Sprint(want) {
		t.Fatalf("block sizes %x, want %x", sizes, want)
	}

	// Compressible input: compressed blocks without bit 31.
	frame, _ = c.Compress(nil, CompressionLZ4, 2, bytes.Repeat([]byte("x"), 100<<10))
	if raw := binary.LittleEndian.Uint32(frame[7:]); raw&lz4Incompressible != 0 || raw >= 64<<10 {
		t.Fatalf("first block size %#x, want a compressed block", raw)
	}

	// Bytes after the end mark are never read (one frame only).
	frame = append(frame, "trailing junk"...)
	if _, err := c.Decompress(nil, CompressionLZ4, 2, frame, 0); err != nil {
		t.Fatalf("trailing bytes after end mark: %v", err)
	}
}

func TestDecompressLZ4ForeignFrames(t *testing.T) {
	src := jsonish(600 << 10)
	var c Codecs
	for name, opts := range map[string][]lz4.Option{
		"default":         nil,
		"block checksums": {lz4.BlockChecksumOption(true)},
		"content sum":     {lz4.ChecksumOption(true)},
		"content size":    {lz4.SizeOption(uint64(len(src)))},
		"256KB blocks":    {lz4.BlockSizeOption(lz4.Block256Kb)},
		"4MB blocks all":  {lz4.BlockSizeOption(lz4.Block4Mb), lz4.BlockChecksumOption(true), lz4.SizeOption(uint64(len(src)))},
	} {
		frame := pierrecFrame(t, src, opts...)
		got, err := c.Decompress(nil, CompressionLZ4, 2, frame, 0)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !bytes.Equal(got, src) {
			t.Errorf("%s: round trip differs", name)
		}
	}

	// A damaged block under a block checksum is a checksum mismatch.
	frame := pierrecFrame(t, src, lz4.BlockChecksumOption(true))
	frame[7+4+10] ^= 0x55
	_, err := c.Decompress(nil, CompressionLZ4, 2, frame, 0)
	if !errors.Is(err, ErrCRCMismatch) {
		t.Fatalf("damaged block: %v, want ErrCRCMismatch", err)
	}
}

func TestDecompressLZ4Descriptor(t *testing.T) {
	var c Codecs
	good, _ := c.Compress(nil, CompressionLZ4, 2, []byte("descriptor"))
	withDesc := func(flg, bd byte) []byte {
		f := bytes.Clone(good)
		f[4], f[5] = flg, bd
		f[6] = byte(xxh32(f[4:6], 0) >> 8)
		return f
	}
	for _, tc := range []struct {
		name    string
		flg, bd byte
		class   error
		field   string
		msg     string
	}{
		{"dependent blocks", 0x40, 0x40, ErrUnsupported, "lz4 FLG", "dependent block stream is unsupported"},
		{"version 2", 0xa0, 0x40, ErrUnsupported, "lz4 FLG", "version 2"},
		{"reserved FLG bit", 0x62, 0x40, ErrCorrupt, "lz4 FLG", "reserved bits"},
		{"dictionary id", 0x61, 0x40, ErrUnsupported, "lz4 FLG", "dictionary"},
		{"block size id 3", 0x60, 0x30, ErrCorrupt, "lz4 BD", "between 4 and 7"},
		{"reserved BD bit", 0x60, 0xc0, ErrCorrupt, "lz4 BD", "reserved bits"},
	} {
		_, err := c.Decompress(nil, CompressionLZ4, 2, withDesc(tc.flg, tc.bd), 0)
		if !errors.Is(err, tc.class) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: err = %v, want %v containing %q", tc.name, err, tc.class, tc.msg)
			continue
		}
		if ce, ok := AsCorrupt(err); !ok || ce.Field != tc.field {
			t.Errorf("%s: err = %#v, want field %q", tc.name, err, tc.field)
		}
	}
	bad := bytes.Clone(good)
	bad[0] = 0x05
	_, err := c.Decompress(nil, CompressionLZ4, 2, bad, 0)
	assertCorrupt(t, err, ErrCorrupt, 0, "lz4 magic")

	// A block larger than BD allows.
	big := bytes.Clone(good[:7])
	big = binary.LittleEndian.AppendUint32(big, 64<<10+1|lz4Incompressible)
	big = append(big, make([]byte, 64<<10+1)...)
	big = binary.LittleEndian.AppendUint32(big, 0)
	_, err = c.Decompress(nil, CompressionLZ4, 2, big, 0)
	assertCorrupt(t, err, ErrCorrupt, 7, "lz4 blockSize")
}

func TestCompressSnappyHeader(t *testing.T) {
	var c Codecs
	out, _ := c.Compress(nil, CompressionSnappy, 2, []byte("abc"))
	if got := hex.EncodeToString(out[:16]); got != "82534e41505059000000000100000001" {
		t.Fatalf("xerial header = %s", got)
	}
	// Empty input: the header only (SnappyOutputStream writes it on flush).
	out, _ = c.Compress(nil, CompressionSnappy, 2, nil)
	if got := hex.EncodeToString(out); got != "82534e41505059000000000100000001" {
		t.Fatalf("empty stream = %s", got)
	}
	// 32 KiB input blocks: 100 KiB makes four chunks.
	src := randomBytes(100<<10, 5)
	out, _ = c.Compress(nil, CompressionSnappy, 2, src)
	var lens []int
	for p := 16; p < len(out); {
		n := int(binary.BigEndian.Uint32(out[p:]))
		dl, err := s2.DecodedLen(out[p+4 : p+4+n])
		if err != nil {
			t.Fatal(err)
		}
		lens = append(lens, dl)
		p += 4 + n
	}
	if fmt.Sprint(lens) != "[32768 32768 32768 4096]" {
		t.Fatalf("chunk input sizes %v", lens)
	}
}

func TestDecompressSnappyRaw(t *testing.T) {
	var c Codecs
	for _, src := range [][]byte{[]byte("x"), []byte("raw snappy, as non-Java producers write it"), jsonish(100 << 10)} {
		raw := s2.EncodeSnappy(nil, src)
		got, err := c.Decompress(nil, CompressionSnappy, 2, raw, 0)
		if err != nil || !bytes.Equal(got, src) {
			t.Fatalf("raw snappy of %d bytes: %d bytes, %v", len(src), len(got), err)
		}
	}
	_, err := c.Decompress(nil, CompressionSnappy, 2, nil, 0)
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "empty") {
		t.Fatalf("empty snappy: %v", err)
	}
	_, err = c.Decompress(nil, CompressionSnappy, 2, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 0)
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("garbage raw snappy: %v", err)
	}
}

// concatenated compresses a and b with codec, one stream (frame, member)
// each, and checks that their concatenation decompresses to a then b, as
// Kafka's stream readers read on past the end of the first.
func concatenated(t *testing.T, c *Codecs, codec Compression, a, b []byte) (ca, cb []byte) {
	t.Helper()
	ca, _ = c.Compress(nil, codec, 2, a)
	cb, _ = c.Compress(nil, codec, 2, b)
	got, err := c.Decompress(nil, codec, 2, append(bytes.Clone(ca), cb...), 0)
	if err != nil || !bytes.Equal(got, append(bytes.Clone(a), b...)) {
		t.Fatalf("%s: two concatenated streams: %d bytes, %v", codec, len(got), err)
	}
	return ca, cb
}

func TestDecompressSnappyConcatenated(t *testing.T) {
	var c Codecs
	b := []byte("second stream")
	_, sb := concatenated(t, &c, CompressionSnappy, jsonish(50<<10), b)
	// Fewer than four trailing bytes end the stream.
	got, err := c.Decompress(nil, CompressionSnappy, 2, append(bytes.Clone(sb), 0, 0, 0), 0)
	if err != nil || !bytes.Equal(got, b) {
		t.Fatalf("3 trailing bytes: %q, %v", got, err)
	}
	// A concatenated header whose magic tail is wrong ends the stream.
	junk := append(bytes.Clone(sb), 0x82, 'S', 'N', 'A', 'x', 'x', 'x', 'x', 0, 0, 0, 1, 0, 0, 0, 1)
	got, err = c.Decompress(nil, CompressionSnappy, 2, junk, 0)
	if err != nil || !bytes.Equal(got, b) {
		t.Fatalf("bad concatenated header: %q, %v", got, err)
	}
	// A negative chunk length is an error.
	neg := append(bytes.Clone(sb), 0xff, 0xff, 0xff, 0xfe, 1, 2, 3)
	_, err = c.Decompress(nil, CompressionSnappy, 2, neg, 0)
	assertCorrupt(t, err, ErrCorrupt, int64(len(sb)), "snappy chunkSize")
	// So is a chunk length beyond the input.
	long := append(bytes.Clone(sb), 0, 0, 1, 0, 1, 2, 3)
	_, err = c.Decompress(nil, CompressionSnappy, 2, long, 0)
	assertCorrupt(t, err, ErrCorrupt, int64(len(sb)), "snappy chunkSize")
}

func TestDecompressGzipJDK17(t *testing.T) {
	var c Codecs
	got, err := c.Decompress(nil, CompressionGzip, 2, testkit.MustHex(t, "1f8b08000000000000ff4b4c4a0600c241243503000000"), 0)
	if err != nil || string(got) != "abc" {
		t.Fatalf("JDK 17 gzip vector: %q, %v", got, err)
	}
}

func TestCompressGzipHeader(t *testing.T) {
	var c Codecs
	out, _ := c.Compress(nil, CompressionGzip, 2, []byte("abc"))
	if got := hex.EncodeToString(out[:10]); got != "1f8b08000000000000ff" {
		t.Fatalf("gzip header = %s, want the JDK 17 one", got)
	}
}

func TestDecompressGzipMultiMember(t *testing.T) {
	var c Codecs
	b := []byte("second member")
	ga, gb := concatenated(t, &c, CompressionGzip, jsonish(80<<10), b)
	// Trailing bytes that are not a gzip header end the stream, as
	// GZIPInputStream.readTrailer ignores them.
	got, err := c.Decompress(nil, CompressionGzip, 2, append(bytes.Clone(gb), "junk after the member"...), 0)
	if err != nil || !bytes.Equal(got, b) {
		t.Fatalf("trailing junk: %q, %v", got, err)
	}
	// A second member that starts well and is damaged is an error.
	bad := append(bytes.Clone(gb), ga[:len(ga)/2]...)
	if _, err := c.Decompress(nil, CompressionGzip, 2, bad, 0); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("damaged second member: %v", err)
	}
	// A damaged trailer CRC.
	crc := bytes.Clone(gb)
	crc[len(crc)-6] ^= 1
	if _, err := c.Decompress(nil, CompressionGzip, 2, crc, 0); !errors.Is(err, ErrCRCMismatch) {
		t.Fatalf("damaged CRC: %v", err)
	}
}

func TestDecompressZstdFrames(t *testing.T) {
	var c Codecs
	a := jsonish(200 << 10)
	za, _ := concatenated(t, &c, CompressionZstd, a, []byte("second frame"))
	var got []byte
	var err error
	// Compress writes no content checksum (zstd-jni's default).
	var h zstd.Header
	if err := h.Decode(za); err != nil || h.HasCheckSum {
		t.Fatalf("frame header %+v, %v: want no checksum", h, err)
	}

	// A streamed frame has no content size and a window above its content,
	// like zstd-jni's for batches above 16 KiB. Under a cap below the window
	// it still decodes when the output fits.
	streamed := zstdStreamed(t, a, zstd.WithWindowSize(2<<20))
	if err := h.Decode(streamed); err != nil || h.HasFCS || h.WindowSize != 2<<20 {
		t.Fatalf("streamed header %+v, %v", h, err)
	}
	for _, lim := range []int{0, 1 << 20, len(a)} {
		got, err = c.Decompress(nil, CompressionZstd, 2, streamed, lim)
		if err != nil || !bytes.Equal(got, a) {
			t.Fatalf("streamed frame, cap %d: %d bytes, %v", lim, len(got), err)
		}
	}
	if _, err := c.Decompress(nil, CompressionZstd, 2, streamed, len(a)-1); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("streamed frame, cap one short: %v", err)
	}

	if _, err := c.Decompress(nil, CompressionZstd, 1, za, 0); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("zstd in magic 1: %v, want ErrUnsupported", err)
	}
	if _, err := c.Decompress(nil, CompressionZstd, 2, nil, 0); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("empty zstd: %v", err)
	}
}

func zstdStreamed(t testing.TB, src []byte, opts ...zstd.EOption) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := zstd.NewWriter(&buf, append([]zstd.EOption{zstd.WithEncoderConcurrency(1)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return writeAndClose(t, w, &buf, src)
}

func TestDecompressUnknownCodec(t *testing.T) {
	var c Codecs
	for _, id := range []Compression{5, 6, 7, -1} {
		_, err := c.Decompress(nil, id, 2, []byte("x"), 0)
		if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), fmt.Sprintf("unknown compression type id: %d", id)) {
			t.Errorf("codec %d: %v", id, err)
		}
		if _, err := c.Compress(nil, id, 2, []byte("x")); !errors.Is(err, ErrUnsupported) {
			t.Errorf("Compress codec %d: %v", id, err)
		}
	}
}

// TestDecompressBomb decompresses 64 MiB of zeros under a 1 MiB cap: every
// codec must stop with ErrTooLarge without allocating anywhere near 64 MiB.
func TestDecompressBomb(t *testing.T) {
	zeros := make([]byte, 64<<20)
	var enc Codecs
	bombs := map[string]struct {
		codec Compression
		data  []byte
	}{}
	for _, codec := range allCodecs {
		data, err := enc.Compress(nil, codec, 2, zeros)
		if err != nil {
			t.Fatal(err)
		}
		bombs[codec.String()] = struct {
			codec Compression
			data  []byte
		}{codec, data}
	}
	bombs["snappy raw"] = struct {
		codec Compression
		data  []byte
	}{CompressionSnappy, s2.EncodeSnappy(nil, zeros)}
	bombs["lz4 4MB blocks"] = struct {
		codec Compression
		data  []byte
	}{CompressionLZ4, pierrecFrame(t, zeros, lz4.BlockSizeOption(lz4.Block4Mb))}
	bombs["zstd streamed"] = struct {
		codec Compression
		data  []byte
	}{CompressionZstd, zstdStreamed(t, zeros)}
	bombs["zstd concatenated"] = struct {
		codec Compression
		data  []byte
	}{CompressionZstd, bytes.Repeat(zstdStreamed(t, zeros[:900<<10], zstd.WithWindowSize(1<<20)), 70)}
	zeros = nil

	const limit = 1 << 20
	for name, b := range bombs {
		t.Run(name, func(t *testing.T) {
			var c Codecs
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			out, err := c.Decompress(nil, b.codec, 2, b.data, limit)
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrTooLarge) {
				t.Fatalf("err = %v, want ErrTooLarge", err)
			}
			if len(out) != 0 {
				t.Errorf("returned %d bytes with the error", len(out))
			}
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("%d compressed bytes, %.1f MiB allocated", len(b.data), float64(alloc)/(1<<20))
			if alloc > 16<<20 {
				t.Fatalf("allocated %d bytes for a %d-byte cap", alloc, limit)
			}
		})
	}
}

// TestDecompressTruncated cuts every codec's output short at many points:
// the result is an error, never a panic, except where the format cannot
// tell (xerial snappy cut at a chunk boundary decodes the chunks before).
func TestDecompressTruncated(t *testing.T) {
	src := jsonish(100 << 10)
	var c Codecs
	for _, codec := range allCodecs[1:] {
		full, _ := c.Compress(nil, codec, 2, src)
		r := rand.New(rand.NewPCG(uint64(codec), 42))
		cuts := map[int]bool{}
		for i := 0; i < 64 && i < len(full); i++ {
			cuts[i] = true
		}
		for i := 0; i < 200; i++ {
			cuts[r.IntN(len(full))] = true
		}
		cuts[len(full)-1] = true
		cuts[len(full)/2] = true
		for cut := range cuts {
			out, err := c.Decompress(nil, codec, 2, full[:cut], 0)
			if err == nil {
				if codec == CompressionSnappy && bytes.HasPrefix(src, out) && cut >= 16 {
					continue // ended at a chunk boundary (or < 4 bytes after one)
				}
				t.Errorf("%s cut to %d of %d bytes: no error (%d bytes out)", codec, cut, len(full), len(out))
				continue
			}
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrCRCMismatch) {
				t.Errorf("%s cut to %d: %v, want ErrCorrupt", codec, cut, err)
			}
		}
	}
	// Cut inside snappy's first chunk: an error.
	full, _ := c.Compress(nil, CompressionSnappy, 2, src)
	if _, err := c.Decompress(nil, CompressionSnappy, 2, full[:100], 0); !errors.Is(err, ErrCorrupt) {
		t.Errorf("snappy cut inside the first chunk: %v", err)
	}
}

// TestCodecsNoAllocs checks that a warmed-up Codecs decompresses into a
// large-enough buffer without allocating.
func TestCodecsNoAllocs(t *testing.T) {
	src := jsonish(256 << 10)
	var c Codecs
	for _, codec := range allCodecs {
		comp, _ := c.Compress(nil, codec, 2, src)
		out, err := c.Decompress(nil, codec, 2, comp, 0)
		if err != nil {
			t.Fatal(err)
		}
		allocs := testing.AllocsPerRun(20, func() {
			out, err = c.Decompress(out, codec, 2, comp, 0)
		})
		if err != nil {
			t.Fatal(err)
		}
		if allocs > 0 && !raceEnabled() {
			t.Errorf("%s: %.1f allocations per Decompress", codec, allocs)
		}
	}
}

// raceEnabled reports a -race build, whose instrumentation allocates inside
// klauspost's decoders.
func raceEnabled() bool {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range info.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

func BenchmarkDecompress(b *testing.B) {
	src := jsonish(256 << 10)
	for _, codec := range allCodecs[1:] {
		b.Run(codec.String(), func(b *testing.B) {
			var c Codecs
			comp, _ := c.Compress(nil, codec, 2, src)
			out, err := c.Decompress(nil, codec, 2, comp, 0)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				if out, err = c.Decompress(out, codec, 2, comp, 0); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(comp))/float64(len(src)), "ratio")
		})
	}
}
