// Command gin-bcrypt is a login service on gin, its handlers closures in main: every
// request checks a password against a bcrypt hash of cost 7 (the default, 10, takes 300 ms
// per request on the shared test machine). Its one bottleneck is the hash's CPU.
package main

import (
	"log"
	"net/http"

	"github.com/gin-gonic/gin"
	"golang.org/x/crypto/bcrypt"

	"github.com/apiperf/apiperf/verdict/zoo/internal/ginsvc"
	"github.com/apiperf/apiperf/verdict/zoo/internal/svc"
)

func main() {
	hash, err := bcrypt.GenerateFromPassword([]byte("correct horse battery staple"), 7)
	if err != nil {
		log.Fatal(err)
	}
	r := ginsvc.New()
	r.GET("/login", func(c *gin.Context) {
		pw := c.DefaultQuery("password", "correct horse battery staple")
		if bcrypt.CompareHashAndPassword(hash, []byte(pw)) != nil {
			c.JSON(http.StatusUnauthorized, gin.H{"ok": false})
			return
		}
		c.JSON(http.StatusOK, gin.H{"ok": true, "user": c.DefaultQuery("user", "ada")})
	})
	log.Fatal(r.RunListener(svc.Listen()))
}
