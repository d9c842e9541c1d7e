package webapi

import "testing"

func TestCheckAddr(t *testing.T) {
	for _, a := range []string{"127.0.0.1:0", "127.0.0.2:8377", "[::1]:80", "localhost:8377"} {
		if err := CheckAddr(a); err != nil {
			t.Errorf("CheckAddr(%q) = %v, want nil", a, err)
		}
	}
	for _, a := range []string{"0.0.0.0:8377", ":8377", "192.168.1.2:80", "[::]:80", "example.com:80", "127.0.0.1", "127.0.0.1:99999", "localhost.evil:80"} {
		if err := CheckAddr(a); err == nil {
			t.Errorf("CheckAddr(%q) = nil, want a refusal", a)
		}
	}
}
