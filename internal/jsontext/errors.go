package jsontext

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
)

// Explain rewrites an error of encoding/json decoding data into words for
// the operator: the field (as a JSON path) and what the input holds there
// against what the model reads, with the line and column, and never the
// decoder's Go type names ("cannot unmarshal string into Go struct field
// Object.errorCode of type int" becomes "field errorCode: a string where
// a number belongs (line 1, column 95)"). Other errors are returned as
// they are.
func Explain(data []byte, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn) && syn.Offset >= int64(len(data)):
		line, col := LineCol(data, syn.Offset)
		return fmt.Errorf("truncated JSON at line %d, column %d", line, col)
	case errors.As(err, &syn):
		line, col := LineCol(data, syn.Offset)
		return fmt.Errorf("invalid JSON at line %d, column %d: %s", line, col, syn.Error())
	case errors.As(err, &typ):
		line, col := LineCol(data, typ.Offset)
		field := typ.Field
		if field == "" {
			field = "(the document)"
		}
		return fmt.Errorf("field %s: %s where %s belongs (line %d, column %d)", field, article(typ.Value), kindWords(typ.Type), line, col)
	case errors.Is(err, io.ErrUnexpectedEOF):
		line, col := LineCol(data, int64(len(data)))
		return fmt.Errorf("truncated JSON at line %d, column %d", line, col)
	}
	return err
}

// article names a JSON value as encoding/json describes it ("string",
// "number", "number -1", "array", "object", "bool").
func article(v string) string {
	switch v {
	case "array", "object":
		return "an " + v
	case "bool":
		return "true or false"
	}
	return "a " + v
}

// kindWords names what a Go type reads, in JSON's words.
func kindWords(t reflect.Type) string {
	if t == nil {
		return "another value"
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "a whole number"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number of 0 or more"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Pointer:
		return kindWords(t.Elem())
	}
	return "another value"
}

// LineCol returns the 1-based line and column of byte offset off in data.
func LineCol(data []byte, off int64) (line, col int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	if off < 0 {
		off = 0
	}
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(off) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}
