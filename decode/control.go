package decode

import (
	"encoding/base64"
	"encoding/binary"
	"strconv"
	"strings"
)

// ControlType is the type field of a control record key
// (ControlRecordType). Type 7 exists only in the KIP-1279 prototypes.
type ControlType int16

const (
	ControlAbort          ControlType = 0
	ControlCommit         ControlType = 1
	ControlLeaderChange   ControlType = 2
	ControlSnapshotHeader ControlType = 3
	ControlSnapshotFooter ControlType = 4
	ControlKRaftVersion   ControlType = 5
	ControlKRaftVoters    ControlType = 6
	// ControlMirrorPidReset is KIP-1279's MIRROR_PID_RESET barrier: every
	// replay of the log drops all producer state when it meets it.
	ControlMirrorPidReset ControlType = 7
)

// String returns the ControlRecordType enum name; unknown ids are
// "UNKNOWN", as ControlRecordType.fromTypeId maps them.
func (t ControlType) String() string {
	if t.Known() {
		return controlTypeNames[t]
	}
	return "UNKNOWN"
}

var controlTypeNames = [...]string{ControlAbort: "ABORT", ControlCommit: "COMMIT", ControlLeaderChange: "LEADER_CHANGE",
	ControlSnapshotHeader: "SNAPSHOT_HEADER", ControlSnapshotFooter: "SNAPSHOT_FOOTER", ControlKRaftVersion: "KRAFT_VERSION",
	ControlKRaftVoters: "KRAFT_VOTERS", ControlMirrorPidReset: "MIRROR_PID_RESET"}

// Known reports whether kseg decodes the value of this type.
func (t ControlType) Known() bool { return t >= ControlAbort && t <= ControlMirrorPidReset }

// Voter is one voter of a LeaderChangeMessage or VotersRecord.
type Voter struct {
	VoterID          int32
	VoterDirectoryID *[16]byte // VotersRecord, LeaderChangeMessage v1+
	Endpoints        []Endpoint
	MinSupported     int16 // KRaftVersionFeature
	MaxSupported     int16
}

// Endpoint is a VotersRecord listener endpoint.
type Endpoint struct {
	Name string
	Host string
	Port uint16
}

// Control is a decoded control record: the key (version, type) and the
// type-specific value fields. Fields that do not belong to Type are zero.
type Control struct {
	KeyVersion int16
	Type       ControlType
	// Version is the value's version: the EndTxnMarker version prefix for
	// ABORT/COMMIT, the in-body Version field for the flexible KRaft and
	// mirror schemas.
	Version int16

	CoordinatorEpoch          int32   // ABORT, COMMIT
	LeaderID                  int32   // LEADER_CHANGE
	Voters                    []Voter // LEADER_CHANGE, KRAFT_VOTERS
	GrantingVoters            []Voter // LEADER_CHANGE
	LastContainedLogTimestamp int64   // SNAPSHOT_HEADER
	KRaftVersion              int16   // KRAFT_VERSION
	SourceClusterID           *string // MIRROR_PID_RESET variant 2 (nil when absent)
}

// ParseControlKey reads the 4-byte control record key: int16 version,
// int16 type. Like ControlRecordType.parseTypeId it requires four bytes and
// a non-negative version and reads the type at byte 2 whatever the version.
func ParseControlKey(key []byte) (version int16, typ ControlType, err error) {
	if len(key) < 4 {
		return 0, 0, corruptf(0, NoBaseOffset, "controlKey", ErrCorrupt, "control record key has %d bytes, need 4", len(key))
	}
	version = int16(binary.BigEndian.Uint16(key))
	if version < 0 {
		return 0, 0, corruptf(0, NoBaseOffset, "controlKey", ErrCorrupt, "invalid control record key version %d", version)
	}
	return version, ControlType(binary.BigEndian.Uint16(key[2:])), nil
}

// ParseControl decodes a control record. An unknown type is not an error:
// Kafka ignores it, and so the result carries only the key. Positions in
// errors are relative to the value.
func ParseControl(key, value []byte) (Control, error) {
	var c Control
	var err error
	c.KeyVersion, c.Type, err = ParseControlKey(key)
	if err != nil {
		return c, err
	}
	switch {
	case c.Type == ControlAbort || c.Type == ControlCommit:
		c.Version, c.CoordinatorEpoch, err = parseEndTxnMarker(value)
		return c, err
	case !c.Type.Known():
		return c, nil
	}
	// Every other value is a flexible message: its Version first, its
	// tagged fields last.
	r := NewCursor(value, 0)
	c.Version = r.Int16("version")
	switch c.Type {
	case ControlLeaderChange:
		c.LeaderID = r.Int32("leaderId")
		c.Voters = voterIDs(&r, "voters", c.Version)
		c.GrantingVoters = voterIDs(&r, "grantingVoters", c.Version)
	case ControlSnapshotHeader:
		c.LastContainedLogTimestamp = r.Int64("lastContainedLogTimestamp")
	case ControlKRaftVersion:
		c.KRaftVersion = r.Int16("kRaftVersion")
	case ControlKRaftVoters:
		c.Voters = votersRecordVoters(&r)
	case ControlMirrorPidReset:
		// MirrorPidResetRecord v0: in one schema revision SourceClusterId
		// (compact string) follows Version. Both variants exist in the
		// prototypes (barrier.md §4.2): the version-only value is exactly
		// 00 00 00.
		if r.Err() == nil && r.Len() > 1 {
			s := r.CompactString("sourceClusterId")
			c.SourceClusterID = &s
		}
	}
	r.TaggedFields()
	if err := r.Err(); err != nil {
		return c, err
	}
	if r.Len() != 0 {
		return c, corruptf(r.Pos(), NoBaseOffset, "value", ErrCorrupt, "%d bytes after the %s value", r.Len(), c.Type)
	}
	return c, nil
}

// parseEndTxnMarker reads an EndTransactionMarker value: int16 version,
// int32 coordinatorEpoch; a higher version parses as version 0 and bytes
// after coordinatorEpoch are not read.
func parseEndTxnMarker(value []byte) (version int16, coordinatorEpoch int32, err error) {
	if len(value) < 6 {
		return 0, 0, corruptf(0, NoBaseOffset, "endTxnMarker", ErrCorrupt, "end transaction marker value has %d bytes, need 6", len(value))
	}
	version = int16(binary.BigEndian.Uint16(value))
	if version < 0 {
		return version, 0, corruptf(0, NoBaseOffset, "endTxnMarker", ErrCorrupt, "invalid end transaction marker version %d", version)
	}
	return version, int32(binary.BigEndian.Uint32(value[2:])), nil
}

// votersRecordVoters reads VotersRecord's voters: a compact array of Voter
// (voterId, voterDirectoryId, endpoints, kRaftVersionFeature).
func votersRecordVoters(r *Cursor) []Voter {
	var vs []Voter
	n := r.CompactArrayLen("voters", 22)
	for i := 0; i < n && r.Err() == nil; i++ {
		var v Voter
		v.VoterID = r.Int32("voterId")
		u := uuid(r, "voterDirectoryId")
		v.VoterDirectoryID = &u
		ne := r.CompactArrayLen("endpoints", 5)
		for j := 0; j < ne && r.Err() == nil; j++ {
			var e Endpoint
			e.Name = r.CompactString("name")
			e.Host = r.CompactString("host")
			e.Port = uint16(r.Int16("port"))
			r.TaggedFields()
			v.Endpoints = append(v.Endpoints, e)
		}
		v.MinSupported = r.Int16("minSupportedVersion")
		v.MaxSupported = r.Int16("maxSupportedVersion")
		r.TaggedFields() // KRaftVersionFeature
		r.TaggedFields() // Voter
		vs = append(vs, v)
	}
	return vs
}

// voterIDs reads LeaderChangeMessage's voters or grantingVoters: a compact
// array of Voter (voterId, and from version 1 voterDirectoryId).
func voterIDs(r *Cursor, field string, version int16) []Voter {
	min := 2
	if version >= 1 {
		min = 18
	}
	n := r.CompactArrayLen(field, min)
	var vs []Voter
	for i := 0; i < n && r.Err() == nil; i++ {
		v := Voter{VoterID: r.Int32("voterId")}
		if version >= 1 {
			u := uuid(r, "voterDirectoryId")
			v.VoterDirectoryID = &u
		}
		r.TaggedFields()
		vs = append(vs, v)
	}
	return vs
}

// uuid reads a 16-byte Uuid.
func uuid(r *Cursor, field string) [16]byte {
	var u [16]byte
	copy(u[:], r.Bytes(16, field))
	return u
}

// UUIDString renders a UUID as Kafka's Uuid.toString: URL-safe base64
// without padding.
func UUIDString(u [16]byte) string { return base64.RawURLEncoding.EncodeToString(u[:]) }

// KafkaJSON renders the value as the generated *JsonConverter.write does
// (compact Jackson, camelCase field names), which kafka-dump-log prints
// after the control label. It is empty for ABORT/COMMIT and unknown types.
func (c *Control) KafkaJSON() string {
	var sb strings.Builder
	w := func(s string) { sb.WriteString(s) }
	num := func(name string, v int64) { w(`"` + name + `":` + strconv.FormatInt(v, 10)) }
	voters := func(name string, vs []Voter) {
		w(`"` + name + `":[`)
		for i, v := range vs {
			if i > 0 {
				w(",")
			}
			w("{")
			num("voterId", int64(v.VoterID))
			if v.VoterDirectoryID != nil {
				w(`,"voterDirectoryId":` + JSONString(UUIDString(*v.VoterDirectoryID)))
			}
			if c.Type == ControlKRaftVoters {
				w(`,"endpoints":[`)
				for j, e := range v.Endpoints {
					if j > 0 {
						w(",")
					}
					w(`{"name":` + JSONString(e.Name) + `,"host":` + JSONString(e.Host) + `,`)
					num("port", int64(e.Port))
					w("}")
				}
				w(`],"kRaftVersionFeature":{`)
				num("minSupportedVersion", int64(v.MinSupported))
				w(",")
				num("maxSupportedVersion", int64(v.MaxSupported))
				w("}")
			}
			w("}")
		}
		w("]")
	}
	if c.Type == ControlAbort || c.Type == ControlCommit || !c.Type.Known() {
		return ""
	}
	// Every value schema starts with its version.
	w("{")
	num("version", int64(c.Version))
	switch c.Type {
	case ControlLeaderChange:
		w(",")
		num("leaderId", int64(c.LeaderID))
		w(",")
		voters("voters", c.Voters)
		w(",")
		voters("grantingVoters", c.GrantingVoters)
	case ControlSnapshotHeader:
		w(",")
		num("lastContainedLogTimestamp", c.LastContainedLogTimestamp)
	case ControlKRaftVersion:
		w(",")
		num("kRaftVersion", int64(c.KRaftVersion))
	case ControlKRaftVoters:
		w(",")
		voters("voters", c.Voters)
	case ControlMirrorPidReset:
		if c.SourceClusterID != nil {
			w(`,"sourceClusterId":` + JSONString(*c.SourceClusterID))
		}
	}
	w("}")
	return sb.String()
}

// AppendMirrorPidResetValue encodes MirrorPidResetRecord v0: the
// version-only variant (00 00 00) when sourceClusterID is nil, else the
// variant carrying the source cluster id as a compact string.
func AppendMirrorPidResetValue(dst []byte, sourceClusterID *string) []byte {
	dst = append(dst, 0, 0) // Version 0
	if sourceClusterID != nil {
		dst = binary.AppendUvarint(dst, uint64(len(*sourceClusterID))+1)
		dst = append(dst, *sourceClusterID...)
	}
	return append(dst, 0) // no tagged fields
}

// AppendControlKey encodes a control record key: version 0, type.
func AppendControlKey(dst []byte, t ControlType) []byte {
	return binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(dst, 0), uint16(t))
}

// AppendEndTxnMarkerValue encodes an EndTxnMarker value: version 0,
// coordinatorEpoch.
func AppendEndTxnMarkerValue(dst []byte, coordinatorEpoch int32) []byte {
	return binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint16(dst, 0), uint32(coordinatorEpoch))
}
