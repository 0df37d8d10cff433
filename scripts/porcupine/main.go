// Checks Interleave's register or key-value histories (the JSON-lines format of
// docs/checker.md: read, write and cas operations on one register; get, put and append on keys,
// partitioned by key as Porcupine's own key-value model is) with Porcupine, one file at a time,
// and prints one line per file: the file, the verdict (linearizable, not_linearizable, unknown)
// and the seconds the check took (parsing excluded). An operation of unknown outcome returns at
// the end of time with an output that any state accepts, as Porcupine's own documentation
// advises.
//
//	go run . [-model register|kv] [-timeout SECONDS] FILE...
//
// Built against a checkout of Porcupine named by go.mod's replace line (scripts/hard-registers
// writes it); nothing is fetched.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"time"

	"github.com/anishathalye/porcupine"
)

// line is one operation as the file holds it.
type line struct {
	Client  int             `json:"client"`
	Op      string          `json:"op"`
	Key     string          `json:"key"`
	Input   json.RawMessage `json:"input"`
	Output  json.RawMessage `json:"output"`
	Call    int64           `json:"call"`
	Return  *int64          `json:"return"`
	Outcome string          `json:"outcome"`
}

// input is what an operation asked for; value -1 stands for "no value" (none is ever written).
type input struct {
	op       string
	value    int64
	expected int64
}

// output is what it returned; unknown when its outcome is.
type output struct {
	unknown bool
	value   int64
	swapped bool
}

const none = int64(-1)

func parseValue(raw json.RawMessage) int64 {
	if len(raw) == 0 || string(raw) == "null" {
		return none
	}
	var v int64
	if err := json.Unmarshal(raw, &v); err != nil {
		panic(err)
	}
	return v
}

var model = porcupine.Model{
	Init: func() interface{} { return none },
	Step: func(state, in, out interface{}) (bool, interface{}) {
		s, i, o := state.(int64), in.(input), out.(output)
		switch i.op {
		case "read":
			return o.unknown || o.value == s, s
		case "write":
			return true, i.value
		default: // cas
			if o.unknown {
				if s == i.expected {
					return true, i.value
				}
				return true, s
			}
			if o.swapped {
				return s == i.expected, i.value
			}
			return s != i.expected, s
		}
	},
	Equal: func(a, b interface{}) bool { return a.(int64) == b.(int64) },
	// As Porcupine's own registerModel (v1.3.0, porcupine_test.go): the value is its hash, so
	// the checker compares fewer states.
	Hash: func(state interface{}) uint64 { return uint64(state.(int64)) },
}

// kvInput and kvOutput are a key-value operation and what it returned.
type kvInput struct {
	op, key, value string
}

type kvOutput struct {
	unknown bool
	value   string
}

// kvModel is Porcupine's own key-value model (its tests' `kvModel`), with unknown outputs.
var kvModel = porcupine.Model{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[string][]porcupine.Operation{}
		var keys []string
		for _, op := range history {
			key := op.Input.(kvInput).key
			if _, seen := byKey[key]; !seen {
				keys = append(keys, key)
			}
			byKey[key] = append(byKey[key], op)
		}
		var partitions [][]porcupine.Operation
		for _, key := range keys {
			partitions = append(partitions, byKey[key])
		}
		return partitions
	},
	Init: func() interface{} { return "" },
	Step: func(state, in, out interface{}) (bool, interface{}) {
		s, i, o := state.(string), in.(kvInput), out.(kvOutput)
		switch i.op {
		case "get":
			return o.unknown || o.value == s, s
		case "put":
			return true, i.value
		default: // append
			return true, s + i.value
		}
	},
	Equal: func(a, b interface{}) bool { return a.(string) == b.(string) },
	// As Porcupine's own kvModel (v1.3.0, porcupine_test.go): FNV-1a of the value, which v1.3.0
	// credits with 10-40x on key-value histories.
	Hash: func(state interface{}) uint64 {
		h := fnv.New64a()
		h.Write([]byte(state.(string)))
		return h.Sum64()
	},
}

func parseText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var text string
	if err := json.Unmarshal(raw, &text); err != nil {
		panic(err)
	}
	return text
}

func readKv(path string) []porcupine.Operation {
	var history []porcupine.Operation
	eachLine(path, func(l line) {
		in := kvInput{op: l.Op, key: l.Key, value: parseText(l.Input)}
		out := kvOutput{unknown: l.Outcome != "ok" || l.Return == nil}
		ret := int64(math.MaxInt64)
		if !out.unknown {
			ret = *l.Return
			out.value = parseText(l.Output)
		}
		history = append(history, porcupine.Operation{
			ClientId: l.Client, Input: in, Call: l.Call, Output: out, Return: ret,
		})
	})
	return history
}

// eachLine calls f with every operation of the file at path.
func eachLine(path string, f func(line)) {
	file, err := os.Open(path)
	if err != nil {
		panic(err)
	}
	defer file.Close()
	scanner := bufio.NewScanner(file)
	scanner.Buffer(make([]byte, 1<<20), 1<<30)
	for scanner.Scan() {
		if len(scanner.Bytes()) == 0 {
			continue
		}
		var l line
		if err := json.Unmarshal(scanner.Bytes(), &l); err != nil {
			panic(err)
		}
		f(l)
	}
	if err := scanner.Err(); err != nil {
		panic(err)
	}
}

func read(path string) []porcupine.Operation {
	var history []porcupine.Operation
	eachLine(path, func(l line) {
		in := input{op: l.Op}
		switch l.Op {
		case "write":
			in.value = parseValue(l.Input)
		case "cas":
			var pair [2]int64
			if err := json.Unmarshal(l.Input, &pair); err != nil {
				panic(err)
			}
			in.expected, in.value = pair[0], pair[1]
		}
		out := output{unknown: l.Outcome != "ok" || l.Return == nil}
		ret := int64(math.MaxInt64)
		if !out.unknown {
			ret = *l.Return
			switch l.Op {
			case "read":
				out.value = parseValue(l.Output)
			case "cas":
				out.swapped = string(l.Output) == "true"
			}
		}
		history = append(history, porcupine.Operation{
			ClientId: l.Client, Input: in, Call: l.Call, Output: out, Return: ret,
		})
	})
	return history
}

func main() {
	timeout := flag.Float64("timeout", 30, "seconds before a check gives up (unknown)")
	which := flag.String("model", "register", "register or kv")
	flag.Parse()
	for _, path := range flag.Args() {
		checked, history := model, []porcupine.Operation(nil)
		switch *which {
		case "register":
			history = read(path)
		case "kv":
			checked, history = kvModel, readKv(path)
		default:
			fmt.Fprintf(os.Stderr, "unknown model %q: register or kv\n", *which)
			os.Exit(2)
		}
		started := time.Now()
		result := porcupine.CheckOperationsTimeout(checked, history, time.Duration(*timeout*float64(time.Second)))
		elapsed := time.Since(started).Seconds()
		verdict := map[porcupine.CheckResult]string{
			porcupine.Ok: "linearizable", porcupine.Illegal: "not_linearizable", porcupine.Unknown: "unknown",
		}[result]
		fmt.Printf("%s\t%s\t%.6f\n", path, verdict, elapsed)
	}
}
