package store

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseQueryConditions(t *testing.T) {
	f, err := ParseQuery("cond=cpu:xeon,cond=race:false,latest")
	if err != nil || !reflect.DeepEqual(f.Conditions, map[string]string{"cpu": "xeon", "race": "false"}) || f.Limit != 1 {
		t.Errorf("ParseQuery(cond=cpu:xeon,cond=race:false,latest) = %+v, %v; want two conditions terms and limit 1", f, err)
	}
	for _, q := range []string{"cond=colour:red", "cond=cpu"} {
		if _, err := ParseQuery(q); err == nil || !strings.Contains(err.Error(), "cond") {
			t.Errorf("ParseQuery(%q) = %v, want an error about the cond term", q, err)
		}
	}
}
