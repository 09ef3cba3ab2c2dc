package settings

import (
	"reflect"
	"testing"
)

// TestCloneOwnsEverything: every slice, map and pointer of Settings (at any
// depth of its structs) is its own in a clone, so that a decode into one
// layer's settings (loadTOML) or a change to the gate's copy never writes
// into another's. A new reference-typed setting that clone forgets fails
// here.
func TestCloneOwnsEverything(t *testing.T) {
	var s Settings
	fill(reflect.ValueOf(&s).Elem())
	c := s.clone()
	compare(t, "Settings", reflect.ValueOf(s), reflect.ValueOf(c))
}

// fill gives every slice, map and pointer under v a value of its own.
func fill(v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() {
				fill(f)
			} else if v.Type().Field(i).Type.Kind() == reflect.Slice || v.Type().Field(i).Type.Kind() == reflect.Map || v.Type().Field(i).Type.Kind() == reflect.Pointer {
				panic("unexported reference field " + v.Type().Field(i).Name + ": teach fill and clone about it")
			}
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		v.SetMapIndex(reflect.Zero(v.Type().Key()), reflect.Zero(v.Type().Elem()))
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
	}
}

// compare fails for each slice, map or pointer a and b share.
func compare(t *testing.T, path string, a, b reflect.Value) {
	t.Helper()
	switch a.Kind() {
	case reflect.Struct:
		for i := range a.NumField() {
			compare(t, path+"."+a.Type().Field(i).Name, a.Field(i), b.Field(i))
		}
	case reflect.Slice, reflect.Map, reflect.Pointer:
		if a.Pointer() == b.Pointer() {
			t.Errorf("%s is shared by a clone: clone must copy it", path)
		}
	}
}
