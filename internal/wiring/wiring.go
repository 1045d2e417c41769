// Package wiring checks what a composition root hands an adapter: a
// struct of services, every one set.
package wiring

import (
	"fmt"
	"reflect"
)

// Require panics, naming what is missing, unless services (a struct or a
// pointer to one) has every pointer and interface field set and every list
// non-empty: an adapter built without a service is a programming error,
// caught at start rather than at a request's nil dereference. who names
// the adapter.
func Require(who string, services any) {
	v := reflect.ValueOf(services)
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			panic(who + ": no services; build them with app.Build")
		}
		v = v.Elem()
	}
	for i := range v.NumField() {
		if f := v.Field(i); (f.Kind() == reflect.Pointer || f.Kind() == reflect.Interface) && f.IsNil() ||
			f.Kind() == reflect.Slice && f.Len() == 0 {
			panic(fmt.Sprintf("%s: the services lack %s; build them with app.Build", who, v.Type().Field(i).Name))
		}
	}
}
