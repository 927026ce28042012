package testenv

import (
	"fmt"
	"reflect"
	"time"
)

// Custom makes or changes a value of a type Fill and Mutate cannot reach by its exported
// fields (a histogram); it reports whether it did.
type Custom func(v reflect.Value, seed int) bool

// Fill sets every exported field reachable from v (a pointer) to a value made from seed:
// pointers allocated, slices and maps of one element, numbers and strings non-zero, times
// set. The same seed makes a deeply equal value, so a test can keep a twin to compare with.
// A field added to a type later is filled too, which is what deep-copy tests need.
func Fill(v any, seed int, custom Custom) {
	fill(reflect.ValueOf(v).Elem(), seed, custom, 0)
}

// maxDepth bounds the walk of recursive types.
const maxDepth = 8

func fill(v reflect.Value, seed int, custom Custom, depth int) {
	if depth > maxDepth || !v.CanSet() {
		return
	}
	if custom != nil && custom(v, seed) {
		return
	}
	if v.Type() == reflect.TypeFor[time.Time]() {
		v.Set(reflect.ValueOf(time.Unix(1_700_000_000+int64(seed), 0).UTC()))
		return
	}
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(seed%100 + 1))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		v.SetUint(uint64(seed%100 + 1))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(seed%100) + 1.5)
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d", seed))
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(p.Elem(), seed, custom, depth+1)
		v.Set(p)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(s.Index(0), seed+1, custom, depth+1)
		v.Set(s)
	case reflect.Array:
		for i := range v.Len() {
			fill(v.Index(i), seed+i, custom, depth+1)
		}
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k, seed, custom, depth+1)
		fill(e, seed+1, custom, depth+1)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Struct:
		for i := range v.NumField() {
			fill(v.Field(i), seed+i, custom, depth+1)
		}
	}
}

// Mutate changes every value reachable from v (a pointer) in place: numbers and strings,
// every element of slices, arrays and maps and a new map entry, whatever pointers point at.
// After a deep copy, mutating the copy leaves the original as it was; memory the two share
// shows as a change in the original.
func Mutate(v any, custom Custom) {
	mutate(reflect.ValueOf(v).Elem(), custom, 0)
}

func mutate(v reflect.Value, custom Custom, depth int) {
	if depth > maxDepth || !v.CanSet() {
		return
	}
	if custom != nil && custom(v, 97) {
		return
	}
	if v.Type() == reflect.TypeFor[time.Time]() {
		v.Set(reflect.ValueOf(v.Interface().(time.Time).Add(time.Hour)))
		return
	}
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(v.Int() + 7)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		v.SetUint(v.Uint() + 7)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(v.Float() + 7)
	case reflect.String:
		v.SetString(v.String() + "+")
	case reflect.Pointer:
		if !v.IsNil() {
			mutate(v.Elem(), custom, depth+1)
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			mutate(v.Index(i), custom, depth+1)
		}
	case reflect.Map:
		if v.IsNil() {
			return
		}
		for _, k := range v.MapKeys() {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(v.MapIndex(k))
			mutate(e, custom, depth+1)
			v.SetMapIndex(k, e)
		}
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k, 1000+v.Len(), custom, depth+1)
		fill(e, 1000, custom, depth+1)
		v.SetMapIndex(k, e)
	case reflect.Struct:
		for i := range v.NumField() {
			mutate(v.Field(i), custom, depth+1)
		}
	}
}
