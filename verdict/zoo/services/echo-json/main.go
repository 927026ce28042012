// Command echo-json is an order-listing service on echo, its handlers methods on a struct:
// every request encodes the whole order book (2,000 orders) as JSON. Its one bottleneck is
// the JSON encoder's CPU.
package main

import (
	"fmt"
	"log"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/apiperf/apiperf/verdict/zoo/internal/echosvc"
	"github.com/apiperf/apiperf/verdict/zoo/internal/svc"
)

type line struct {
	SKU      string  `json:"sku"`
	Quantity int     `json:"quantity"`
	Price    float64 `json:"price"`
}

type order struct {
	ID       int               `json:"id"`
	Customer string            `json:"customer"`
	Placed   time.Time         `json:"placed"`
	Lines    []line            `json:"lines"`
	Tags     map[string]string `json:"tags"`
}

type orderAPI struct {
	orders []order
}

func newOrderAPI(n int) *orderAPI {
	a := &orderAPI{}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		o := order{ID: i, Customer: fmt.Sprintf("customer-%d", i%97), Placed: start.Add(time.Duration(i) * time.Minute),
			Tags: map[string]string{"channel": "web", "region": fmt.Sprintf("eu-%d", i%3)}}
		for j := range 3 {
			o.Lines = append(o.Lines, line{SKU: fmt.Sprintf("sku-%05d", i*3+j), Quantity: j + 1, Price: float64(i%50) + 0.99})
		}
		a.orders = append(a.orders, o)
	}
	return a
}

func (a *orderAPI) list(c echo.Context) error {
	return c.JSON(http.StatusOK, a.orders)
}

func main() {
	api := newOrderAPI(2000)
	e := echosvc.New()
	e.GET("/orders", api.list)
	e.Listener = svc.Listen()
	log.Fatal(e.Start(""))
}
