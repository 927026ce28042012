// Command gin-goroutineleak is a session service on gin, its handlers methods on a struct:
// every login starts a goroutine that waits for the session's revocation, and nothing ever
// revokes or ends it. Its one bottleneck is that leak: goroutines pile up.
package main

import (
	"log"
	"net/http"
	"strconv"
	"sync/atomic"

	"github.com/gin-gonic/gin"

	"github.com/apiperf/apiperf/verdict/zoo/internal/ginsvc"
	"github.com/apiperf/apiperf/verdict/zoo/internal/svc"
)

type sessions struct {
	next atomic.Int64
}

// watchRevocation waits for the session to be revoked, which never happens.
func (s *sessions) watchRevocation(id int64, revoked <-chan struct{}) {
	<-revoked
	log.Printf("session %d revoked", id)
}

func (s *sessions) login(c *gin.Context) {
	id := s.next.Add(1)
	go s.watchRevocation(id, make(chan struct{}))
	c.JSON(http.StatusOK, gin.H{"session": strconv.FormatInt(id, 10)})
}

func main() {
	s := &sessions{}
	r := ginsvc.New()
	r.GET("/login", s.login)
	log.Fatal(r.RunListener(svc.Listen()))
}
