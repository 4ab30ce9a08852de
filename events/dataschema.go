package events

import (
	"strconv"
	"strings"
)

// SchemaBase is the base of every dataschema URI. It is a name, not a server: the
// path after it is the file's path under schemas/ in the callbus repository (and in
// the schemas package's embedded files), where a consumer resolves it.
const SchemaBase = "https://callbus.dev/schemas/"

// versions lists the types whose data this package's Go types describe at a version
// other than 1. A type absent from it is at version 1, so a new type needs no entry.
// A breaking change to a type's data adds data/<type>.v<N>.json beside the old file
// and sets N here when the Go types move to it (docs/consuming.md#versions).
var versions = map[Type]int{}

// Version returns the version of type t's data that this package's typed events
// describe: 1 for every type of this release.
func Version(t Type) int {
	if v, ok := versions[t]; ok {
		return v
	}
	return 1
}

// DataSchema is the CloudEvents dataschema of version v of type t's data:
// SchemaBase + "data/<type>.v<v>.json", the file schemas/data/<type>.v<v>.json.
func DataSchema(t Type, v int) string {
	return SchemaBase + "data/" + string(t) + ".v" + strconv.Itoa(v) + ".json"
}

// ParseDataSchema returns the type and version named by a URI made by DataSchema,
// and false for any other URI.
func ParseDataSchema(uri string) (Type, int, bool) {
	name, ok := strings.CutPrefix(uri, SchemaBase+"data/")
	if !ok {
		return "", 0, false
	}
	name, ok = strings.CutSuffix(name, ".json")
	if !ok {
		return "", 0, false
	}
	i := strings.LastIndex(name, ".v")
	if i <= 0 {
		return "", 0, false
	}
	v, err := strconv.Atoi(name[i+2:])
	if err != nil || v < 1 || strconv.Itoa(v) != name[i+2:] {
		return "", 0, false
	}
	return Type(name[:i]), v, true
}

// VersionSubject is the NATS subject of version v of type t's events: Subject for
// version 1, and Subject + ".v<v>" for a later version published beside it, so that
// a consumer of <prefix>.<account>.<type> keeps receiving the version it was built
// for.
func VersionSubject(prefix, account string, t Type, v int) string {
	s := Subject(prefix, account, t)
	if v == 1 {
		return s
	}
	return s + ".v" + strconv.Itoa(v)
}
