// Command kmsgpeer is the library peer kseg's deep dump is measured
// against: the tool a Go user would write with franz-go. It reads each
// .log through a 1 MiB bufio.Reader one batch at a time, parses the batch
// with kmsg.RecordBatch, checks its CRC-32C as kgo's consumer does,
// decompresses it with kgo.DefaultDecompressor (the same klauspost,
// pierrec and s2 codec libraries kseg uses), parses every record with
// kmsg.Record, and prints each batch as one encoding/json line holding its
// records (keys, values and header values as base64, as kseg dump
// --deep --print-data --output json does).
//
//	go run ./testdata/bench/kmsgpeer FILE.log|DIR... > /dev/null
package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kseg/kseg/testdata/bench/benchcmd"
	"github.com/kseg/kseg/testdata/bench/logfiles"
)

type header struct {
	Key   string `json:"key"`
	Value []byte `json:"value"`
}

type record struct {
	Offset    int64    `json:"offset"`
	Timestamp int64    `json:"timestamp"`
	Key       []byte   `json:"key"`
	Value     []byte   `json:"value"`
	Headers   []header `json:"headers"`
}

type batch struct {
	Type                 string   `json:"type"`
	File                 string   `json:"file"`
	Position             int64    `json:"position"`
	BaseOffset           int64    `json:"baseOffset"`
	LastOffset           int64    `json:"lastOffset"`
	Count                int32    `json:"count"`
	CRC                  uint32   `json:"crc"`
	CRCValid             bool     `json:"crcValid"`
	Compression          string   `json:"compression"`
	IsTransactional      bool     `json:"isTransactional"`
	IsControl            bool     `json:"isControl"`
	ProducerID           int64    `json:"producerId"`
	ProducerEpoch        int16    `json:"producerEpoch"`
	BaseSequence         int32    `json:"baseSequence"`
	PartitionLeaderEpoch int32    `json:"partitionLeaderEpoch"`
	BaseTimestamp        int64    `json:"baseTimestamp"`
	MaxTimestamp         int64    `json:"maxTimestamp"`
	Records              []record `json:"records"`
}

var codecNames = [...]string{"none", "gzip", "snappy", "lz4", "zstd"}

func main() {
	benchcmd.Main("kmsgpeer", func() error {
		out := bufio.NewWriterSize(os.Stdout, 256<<10)
		enc := json.NewEncoder(out)
		dec := kgo.DefaultDecompressor()
		err := logfiles.Each(os.Args[1:], func(f string) error { return dump(f, enc, dec) })
		if ferr := out.Flush(); err == nil {
			err = ferr
		}
		return err
	})
}

func dump(path string, enc *json.Encoder, dec kgo.Decompressor) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	crcTable := crc32.MakeTable(crc32.Castagnoli)
	var raw []byte
	var pos int64
	for {
		var hdr [12]byte
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("%s: position %d: %w", path, pos, err)
		}
		n := int(binary.BigEndian.Uint32(hdr[8:]))
		if cap(raw) < 12+n {
			raw = make([]byte, 12+n)
		}
		raw = raw[:12+n]
		copy(raw, hdr[:])
		if _, err := io.ReadFull(r, raw[12:]); err != nil {
			return fmt.Errorf("%s: position %d: %w", path, pos, err)
		}
		var rb kmsg.RecordBatch
		if err := rb.ReadFrom(raw); err != nil {
			return fmt.Errorf("%s: position %d: %w", path, pos, err)
		}
		if rb.Magic != 2 {
			return fmt.Errorf("%s: position %d: magic %d is not supported", path, pos, rb.Magic)
		}
		codec := rb.Attributes & 7
		b := batch{Type: "batch", File: path, Position: pos, BaseOffset: rb.FirstOffset,
			LastOffset: rb.FirstOffset + int64(rb.LastOffsetDelta), Count: rb.NumRecords, CRC: uint32(rb.CRC),
			CRCValid:    crc32.Checksum(raw[21:], crcTable) == uint32(rb.CRC),
			Compression: codecNames[min(int(codec), len(codecNames)-1)], IsTransactional: rb.Attributes&0x10 != 0,
			IsControl: rb.Attributes&0x20 != 0, ProducerID: rb.ProducerID, ProducerEpoch: rb.ProducerEpoch,
			BaseSequence: rb.FirstSequence, PartitionLeaderEpoch: rb.PartitionLeaderEpoch,
			BaseTimestamp: rb.FirstTimestamp, MaxTimestamp: rb.MaxTimestamp}
		data, err := dec.Decompress(rb.Records, kgo.CompressionCodecType(codec))
		if err != nil {
			return fmt.Errorf("%s: position %d: %w", path, pos, err)
		}
		for i := int32(0); i < rb.NumRecords; i++ {
			length, used := kbin.Varint(data)
			total := used + int(length)
			if used == 0 || length < 0 || total > len(data) {
				return fmt.Errorf("%s: position %d: record %d: bad length", path, pos, i)
			}
			var kr kmsg.Record
			if err := kr.ReadFrom(data[:total]); err != nil {
				return fmt.Errorf("%s: position %d: record %d: %w", path, pos, i, err)
			}
			data = data[total:]
			rec := record{Offset: rb.FirstOffset + int64(kr.OffsetDelta), Timestamp: rb.FirstTimestamp + kr.TimestampDelta64,
				Key: kr.Key, Value: kr.Value, Headers: make([]header, 0, len(kr.Headers))}
			for _, h := range kr.Headers {
				rec.Headers = append(rec.Headers, header{Key: h.Key, Value: h.Value})
			}
			b.Records = append(b.Records, rec)
		}
		if err := enc.Encode(&b); err != nil {
			return err
		}
		pos += int64(len(raw))
	}
}
