// Package wiring checks what a composition root hands an adapter: a
// struct of services, every one set.
package wiring

import (
	"fmt"
	"reflect"
)

// Require panics, naming what is missing, unless services (a struct or a
// pointer to one) has every pointer and interface field set and every list
// non-empty with each of its items set: an adapter built without a service
// is a programming error, caught at start rather than at a request's nil
// dereference. who names the adapter.
func Require(who string, services any) {
	v := reflect.ValueOf(services)
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			panic(who + ": no services; build them with app.Build")
		}
		v = v.Elem()
	}
	for i := range v.NumField() {
		f, name := v.Field(i), v.Type().Field(i).Name
		missing := unset(f) || f.Kind() == reflect.Slice && f.Len() == 0
		for j := 0; !missing && f.Kind() == reflect.Slice && j < f.Len(); j++ {
			if unset(f.Index(j)) {
				missing, name = true, fmt.Sprintf("%s[%d]", name, j)
			}
		}
		if missing {
			panic(fmt.Sprintf("%s: the services lack %s; build them with app.Build", who, name))
		}
	}
}

// unset says whether v is a nil pointer or interface, or an interface
// holding a nil pointer.
func unset(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Pointer:
		return v.IsNil()
	case reflect.Interface:
		return v.IsNil() || unset(v.Elem())
	}
	return false
}
