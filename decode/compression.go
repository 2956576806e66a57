package decode

import "fmt"

// Compression is the codec id in the low three bits of the attributes
// (CompressionType.forId in Kafka). Ids 5..7 are invalid.
type Compression int8

const (
	CompressionNone   Compression = 0
	CompressionGzip   Compression = 1
	CompressionSnappy Compression = 2
	CompressionLZ4    Compression = 3
	CompressionZstd   Compression = 4
)

// DefaultMaxDecompressed is the default cap on one batch's decompressed
// records section: 256 MiB, far above any sane max.message.bytes.
const DefaultMaxDecompressed = 256 << 20

// String returns Kafka's codec name as kafka-dump-log prints it
// (compresscodec: none|gzip|snappy|lz4|zstd).
func (c Compression) String() string {
	if c.Valid() {
		return compressionNames[c]
	}
	return fmt.Sprintf("unknown(%d)", int8(c))
}

var compressionNames = [...]string{CompressionNone: "none", CompressionGzip: "gzip", CompressionSnappy: "snappy", CompressionLZ4: "lz4", CompressionZstd: "zstd"}

// Valid reports whether Kafka knows the codec id.
func (c Compression) Valid() bool { return c >= CompressionNone && c <= CompressionZstd }

// ParseCompression maps a codec name back to its id.
func ParseCompression(s string) (Compression, error) {
	for c := CompressionNone; c <= CompressionZstd; c++ {
		if c.String() == s {
			return c, nil
		}
	}
	return 0, fmt.Errorf("unknown compression %q (want none, gzip, snappy, lz4 or zstd)", s)
}
