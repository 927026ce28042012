package lua

import (
	"fmt"
	"net"
	"strings"
	"time"

	glua "github.com/yuin/gopher-lua"
)

// bootstrap is the wrk table as wrk's own wrk.lua defines it; wrk.format is luaFormat, with
// the same quirks (Host filled with wrk.host, without the port; Content-Length set or
// cleared in the headers table it is given).
const bootstrap = `
wrk = {
  scheme  = "http",
  host    = "localhost",
  port    = nil,
  method  = "GET",
  path    = "/",
  headers = {},
  body    = nil,
  thread  = nil,
}

-- wrk.format, wrk.lookup and wrk.connect are Go functions (luaFormat, luaLookup, luaConnect).

function wrk.init(args)
  if not wrk.headers["Host"] then
    local host = wrk.host
    local port = wrk.port
    host = host:find(":") and ("[" .. host .. "]") or host
    host = port and (host .. ":" .. port) or host
    wrk.headers["Host"] = host
  end
  if type(init) == "function" then
    init(args)
  end
  local req = wrk.format()
  wrk.request = function() return req end
end
`

// installOutput sends print and io.write to the source's writer instead of the process's
// stdout.
func (s *Source) installOutput(L *glua.LState) {
	write := func(text string) {
		s.outMu.Lock()
		defer s.outMu.Unlock()
		_, _ = s.out.Write([]byte(text))
	}
	L.SetGlobal("print", L.NewFunction(func(L *glua.LState) int {
		var b strings.Builder
		for i := 1; i <= L.GetTop(); i++ {
			if i > 1 {
				b.WriteByte('\t')
			}
			b.WriteString(L.ToStringMeta(L.Get(i)).String())
		}
		b.WriteByte('\n')
		write(b.String())
		return 0
	}))
	ioWrite := L.NewFunction(func(L *glua.LState) int {
		var b strings.Builder
		for i := 1; i <= L.GetTop(); i++ {
			switch v := L.Get(i).(type) {
			case glua.LString, glua.LNumber:
				b.WriteString(v.String())
			}
		}
		write(b.String())
		return 0
	})
	if io, ok := L.GetGlobal("io").(*glua.LTable); ok {
		io.RawSetString("write", ioWrite)
		// io.stdout:write(...) too: a table whose write method skips the self argument.
		stdout := L.NewTable()
		stdout.RawSetString("write", L.NewFunction(func(L *glua.LState) int {
			L.Remove(1)
			ioWrite.GFunction(L)
			L.Push(stdout)
			return 1
		}))
		io.RawSetString("stdout", stdout)
	}
}

// luaFormat is wrk.format(method, path, headers, body) in Go, with the Lua version's
// behaviour: defaults from wrk, Host set to wrk.host in the given table when absent, and
// Content-Length set (or cleared, without a body) in that table.
func luaFormat(L *glua.LState) int {
	wrk := L.GetGlobal("wrk").(*glua.LTable)
	arg := func(i int, field string) glua.LValue {
		if v := L.Get(i); v != glua.LNil && v != glua.LFalse {
			return v
		}
		return wrk.RawGetString(field)
	}
	method, path, body := arg(1, "method"), arg(2, "path"), arg(4, "body")
	headers, ok := arg(3, "headers").(*glua.LTable)
	if !ok {
		L.RaiseError("wrk.format: headers must be a table")
	}
	if v := L.GetField(headers, "Host"); v == glua.LNil || v == glua.LFalse {
		L.SetField(headers, "Host", wrk.RawGetString("host"))
	}
	bs, hasBody := body.(glua.LString)
	if hasBody {
		L.SetField(headers, "Content-Length", glua.LNumber(len(bs)))
	} else {
		L.SetField(headers, "Content-Length", glua.LNil)
	}
	var b strings.Builder
	b.Grow(128 + len(bs))
	b.WriteString(L.ToStringMeta(method).String())
	b.WriteByte(' ')
	b.WriteString(L.ToStringMeta(path).String())
	b.WriteString(" HTTP/1.1\r\n")
	headers.ForEach(func(k, v glua.LValue) {
		b.WriteString(L.ToStringMeta(k).String())
		b.WriteString(": ")
		b.WriteString(L.ToStringMeta(v).String())
		b.WriteString("\r\n")
	})
	b.WriteString("\r\n")
	b.WriteString(string(bs))
	L.Push(glua.LString(b.String()))
	return 1
}

// luaLookup is wrk.lookup(host, service): the addresses host resolves to, as "ip:port"
// strings. A name that does not resolve raises an error (wrk prints it and exits).
func luaLookup(L *glua.LState) int {
	host := L.CheckString(1)
	service := L.CheckString(2)
	port, err := net.LookupPort("tcp", service)
	if err != nil {
		L.RaiseError("unable to resolve %s:%s %s", host, service, err)
	}
	ips, err := net.LookupHost(host)
	if err != nil {
		L.RaiseError("unable to resolve %s:%s %s", host, service, err)
	}
	tb := L.NewTable()
	for _, ip := range ips {
		tb.Append(glua.LString(net.JoinHostPort(ip, fmt.Sprint(port))))
	}
	L.Push(tb)
	return 1
}

// luaConnect is wrk.connect(addr): whether a TCP connection to addr can be opened.
func luaConnect(L *glua.LState) int {
	addr := L.CheckString(1)
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err == nil {
		c.Close()
	}
	L.Push(glua.LBool(err == nil))
	return 1
}

const threadType = "wrk.thread"

// userData is the thread object a script sees (setup's argument, wrk.thread): thread.addr,
// thread:get(name), thread:set(name, value), thread:stop().
func (t *thread) userData(L *glua.LState) *glua.LUserData {
	mt, ok := L.GetTypeMetatable(threadType).(*glua.LTable)
	if !ok {
		mt = L.NewTypeMetatable(threadType)
		methods := L.SetFuncs(L.NewTable(), map[string]glua.LGFunction{
			"get":  threadGet,
			"set":  threadSet,
			"stop": threadStop,
		})
		L.SetField(mt, "__index", L.NewFunction(func(L *glua.LState) int {
			t := checkThread(L)
			switch key := L.CheckString(2); key {
			case "addr":
				L.Push(glua.LString(t.addr))
			case "id":
				L.Push(glua.LNumber(t.id))
			default:
				L.Push(methods.RawGetString(key))
			}
			return 1
		}))
		L.SetField(mt, "__newindex", L.NewFunction(func(L *glua.LState) int {
			t := checkThread(L)
			if key := L.CheckString(2); key != "addr" {
				L.RaiseError("thread has no field %q to set", key)
			}
			addr := L.ToStringMeta(L.Get(3)).String()
			if addr != t.src.target.Address {
				L.RaiseError("thread.addr = %q: apiperf sends every thread to the target %s; give the address in the URL instead", addr, t.src.target.Address)
			}
			t.addr = addr
			return 0
		}))
		L.SetField(mt, "__tostring", L.NewFunction(func(L *glua.LState) int {
			L.Push(glua.LString(fmt.Sprintf("thread %d (%s)", checkThread(L).id, checkThread(L).addr)))
			return 1
		}))
	}
	ud := L.NewUserData()
	ud.Value = t
	ud.Metatable = mt
	return ud
}

func checkThread(L *glua.LState) *thread {
	ud := L.CheckUserData(1)
	t, ok := ud.Value.(*thread)
	if !ok {
		L.ArgError(1, "thread expected")
	}
	return t
}

// threadGet is thread:get(name): a global of the thread's state, copied into the caller's.
func threadGet(L *glua.LState) int {
	t := checkThread(L)
	name := L.CheckString(2)
	if t.L == L {
		L.Push(L.GetGlobal(name))
		return 1
	}
	// The caller is the main state (setup or done), which never holds a thread's lock.
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.L == nil {
		L.Push(glua.LNil)
		return 1
	}
	v, err := copyValue(L, t.L.GetGlobal(name), 0)
	if err != nil {
		L.RaiseError("thread:get(%q): %s", name, err)
	}
	L.Push(v)
	return 1
}

// threadSet is thread:set(name, value): sets a global in the thread's state. Only nil,
// booleans, numbers, strings and tables of those cross states, as in wrk.
func threadSet(L *glua.LState) int {
	t := checkThread(L)
	name := L.CheckString(2)
	if t.L != L {
		t.mu.Lock()
		defer t.mu.Unlock()
	}
	if t.L == nil {
		return 0
	}
	v, err := copyValue(t.L, L.Get(3), 0)
	if err != nil {
		L.RaiseError("thread:set(%q): %s", name, err)
	}
	t.L.SetGlobal(name, v)
	return 0
}

// threadStop is thread:stop(): the thread's connections end at their next response (wrk
// stops that thread's event loop); the other threads go on.
func threadStop(L *glua.LState) int {
	checkThread(L).stopped.Store(true)
	return 0
}

// copyValue copies v into state dst: nil, booleans, numbers, strings and tables of those.
func copyValue(dst *glua.LState, v glua.LValue, depth int) (glua.LValue, error) {
	if depth > 32 {
		return nil, fmt.Errorf("table nested too deep (or cyclic)")
	}
	switch x := v.(type) {
	case *glua.LNilType, glua.LBool, glua.LNumber, glua.LString:
		return v, nil
	case *glua.LTable:
		out := dst.NewTable()
		var err error
		x.ForEach(func(k, val glua.LValue) {
			if err != nil {
				return
			}
			var ck, cv glua.LValue
			if ck, err = copyValue(dst, k, depth+1); err != nil {
				return
			}
			if cv, err = copyValue(dst, val, depth+1); err != nil {
				return
			}
			out.RawSet(ck, cv)
		})
		return out, err
	}
	return nil, fmt.Errorf("cannot move a %s between Lua states", v.Type())
}
