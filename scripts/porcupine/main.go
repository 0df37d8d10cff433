// Checks Interleave's register histories (the JSON-lines format of docs/checker.md: read, write
// and cas operations on one register) with Porcupine, one file at a time, and prints one line
// per file: the file, the verdict (linearizable, not_linearizable, unknown) and the seconds the
// check took (parsing excluded). An operation of unknown outcome returns at the end of time with
// an output that any state accepts, as Porcupine's own documentation advises.
//
//	go run . [-timeout SECONDS] FILE...
//
// Built against a checkout of Porcupine named by go.mod's replace line (scripts/hard-registers
// writes it); nothing is fetched.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"time"

	"github.com/anishathalye/porcupine"
)

// line is one operation as the file holds it.
type line struct {
	Client  int             `json:"client"`
	Op      string          `json:"op"`
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
}

func read(path string) []porcupine.Operation {
	file, err := os.Open(path)
	if err != nil {
		panic(err)
	}
	defer file.Close()
	var history []porcupine.Operation
	scanner := bufio.NewScanner(file)
	scanner.Buffer(make([]byte, 1<<20), 1<<26)
	for scanner.Scan() {
		if len(scanner.Bytes()) == 0 {
			continue
		}
		var l line
		if err := json.Unmarshal(scanner.Bytes(), &l); err != nil {
			panic(err)
		}
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
	}
	return history
}

func main() {
	timeout := flag.Float64("timeout", 30, "seconds before a check gives up (unknown)")
	flag.Parse()
	for _, path := range flag.Args() {
		history := read(path)
		started := time.Now()
		result := porcupine.CheckOperationsTimeout(model, history, time.Duration(*timeout*float64(time.Second)))
		elapsed := time.Since(started).Seconds()
		verdict := map[porcupine.CheckResult]string{
			porcupine.Ok: "linearizable", porcupine.Illegal: "not_linearizable", porcupine.Unknown: "unknown",
		}[result]
		fmt.Printf("%s\t%s\t%.6f\n", path, verdict, elapsed)
	}
}
