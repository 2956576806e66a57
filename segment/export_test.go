package segment

// HalvesMinBytes lets tests walk small logs in two halves (or never).
var HalvesMinBytes = &halvesMinBytes

// HalvesUsed counts the verifications a two-halves walk answered.
var HalvesUsed = &halvesUsed
