// The page of `ember board`: one self-contained HTML document (no network,
// no library) that polls the board's JSON endpoints every 2 s and draws the
// chosen runs' curves as SVG. Run names and file contents are untrusted:
// they reach the page through textContent only, never innerHTML.
#include "ember/serve/board.h"

namespace ember::serve {

const char* board_page() {
  return R"EMBERPAGE(<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>ember board</title>
<style>
body{font:14px system-ui,sans-serif;margin:0;display:flex;color:#222}
#side{width:280px;padding:12px;border-right:1px solid #ddd;height:100vh;overflow:auto;box-sizing:border-box}
#main{flex:1;padding:12px;overflow:auto;height:100vh;box-sizing:border-box}
#runs label{display:block;padding:2px 0;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.swatch{display:inline-block;width:10px;height:10px;margin-right:4px}
.charts{display:flex;flex-wrap:wrap;gap:12px}
.chart{border:1px solid #ddd;padding:4px}
.chart h4{margin:0 0 4px;font-size:13px}
table{border-collapse:collapse;font-size:12px;margin:4px 0 12px}
td,th{border:1px solid #ddd;padding:2px 6px;text-align:right}
th:first-child,td:first-child{text-align:left}
#status{color:#888;font-size:12px}
</style></head><body>
<div id="side"><h3>ember board</h3><div id="status">loading</div><div id="runs"></div></div>
<div id="main">
<h3>Per step</h3><div class="charts" id="steps"></div>
<h3>Per epoch</h3><div class="charts" id="epochs"></div>
<h3>Hyper-parameters (keys that differ)</h3><div id="params"></div>
<h3>Confusion matrix (test)</h3><div id="confusion"></div>
</div>
<script>
"use strict";
const COLORS=["#1f77b4","#d62728","#2ca02c","#ff7f0e","#9467bd","#8c564b","#e377c2","#7f7f7f","#bcbd22","#17becf"];
const state={runs:[],chosen:new Map(),seen:new Set(),data:new Map()};
function el(tag,attrs,text){const e=document.createElement(tag);for(const k in attrs||{})e.setAttribute(k,attrs[k]);if(text!==undefined)e.textContent=String(text);return e;}
function svg(tag,attrs){const e=document.createElementNS("http://www.w3.org/2000/svg",tag);for(const k in attrs)e.setAttribute(k,attrs[k]);return e;}
function color(name){const i=state.runs.findIndex(r=>r.run===name);return COLORS[(i<0?0:i)%COLORS.length];}
async function get(path){const r=await fetch(path,{cache:"no-store"});if(!r.ok)throw new Error(path+": "+r.status);return r.json();}
function fmt(v){if(v===null||v===undefined)return "-";if(typeof v!=="number")return String(v);return Math.abs(v)>=1000||Number.isInteger(v)?String(Math.round(v)):v.toPrecision(4);}
function drawRuns(){
  const box=document.getElementById("runs");box.replaceChildren();
  for(const r of state.runs){
    const l=el("label",{title:r.run});const c=el("input",{type:"checkbox","data-run":r.run});
    c.checked=state.chosen.get(r.run)!==false;
    c.onchange=()=>{state.chosen.set(r.run,c.checked);render();};
    const sw=el("span",{class:"swatch"});sw.style.background=color(r.run);
    l.append(c,sw,document.createTextNode(r.run+" ("+r.status+", "+r.epoch+"/"+r.epochs+")"));box.append(l);
  }
}
// One chart: x = column `x`, y = column `y`, one polyline per chosen run.
function chart(kind,x,y,series){
  const W=380,H=220,L=52,B=24,T=6,R=8;
  let xs=[],ys=[];for(const s of series)for(const p of s.points){xs.push(p[0]);ys.push(p[1]);}
  const div=el("div",{class:"chart"});div.append(el("h4",{},y));
  const g=svg("svg",{width:W,height:H,"data-chart":kind+":"+y});
  if(xs.length){
    let x0=Math.min(...xs),x1=Math.max(...xs),y0=Math.min(...ys),y1=Math.max(...ys);
    if(x1===x0)x1=x0+1;if(y1===y0){y1=y0+Math.abs(y0||1)*0.01;}
    const sx=v=>L+(v-x0)/(x1-x0)*(W-L-R),sy=v=>H-B-(v-y0)/(y1-y0)*(H-B-T);
    g.append(svg("line",{x1:L,y1:H-B,x2:W-R,y2:H-B,stroke:"#999"}),svg("line",{x1:L,y1:T,x2:L,y2:H-B,stroke:"#999"}));
    const lab=(t,a)=>{const e=svg("text",a);e.textContent=t;e.setAttribute("font-size","10");return e;};
    g.append(lab(fmt(y1),{x:2,y:T+8}),lab(fmt(y0),{x:2,y:H-B}),lab(fmt(x0),{x:L,y:H-8}),lab(x+" "+fmt(x1),{x:W-R,y:H-8,"text-anchor":"end"}));
    for(const s of series){
      const pts=s.points.map(p=>sx(p[0]).toFixed(1)+","+sy(p[1]).toFixed(1)).join(" ");
      g.append(svg("polyline",{points:pts,fill:"none",stroke:color(s.run),"stroke-width":1.5,"data-run":s.run,"data-points":s.points.length}));
      if(s.points.length===1){const p=s.points[0];g.append(svg("circle",{cx:sx(p[0]),cy:sy(p[1]),r:2.5,fill:color(s.run)}));}
    }
  }
  div.append(g);return div;
}
// Every numeric column but the x axis (and the bookkeeping ones) gets a chart.
function charts(kind,file,x,skip){
  const box=document.getElementById(kind);box.replaceChildren();
  const cols=[];const series=new Map();
  for(const r of state.runs){
    if(state.chosen.get(r.run)===false)continue;
    const d=(state.data.get(r.run)||{})[file];if(!d)continue;
    const xi=d.columns.indexOf(x);if(xi<0)continue;
    d.columns.forEach((c,ci)=>{
      if(c===x||skip.includes(c))return;
      if(!cols.includes(c))cols.push(c);
      const pts=d.rows.filter(row=>row[xi]!==null&&row[ci]!==null).map(row=>[row[xi],row[ci]]);
      if(!series.has(c))series.set(c,[]);series.get(c).push({run:r.run,points:pts});
    });
  }
  for(const c of cols)box.append(chart(kind,x,c,series.get(c)));
}
function params(){
  const box=document.getElementById("params");box.replaceChildren();
  const chosen=state.runs.filter(r=>state.chosen.get(r.run)!==false);if(!chosen.length)return;
  const keys=[...new Set(chosen.flatMap(r=>Object.keys(r.config||{})))].sort();
  const t=el("table",{id:"params-table"});const h=el("tr");h.append(el("th",{},"run"));
  for(const k of keys)h.append(el("th",{},k));t.append(h);
  for(const r of chosen){const tr=el("tr");tr.append(el("td",{},r.run));for(const k of keys)tr.append(el("td",{},fmt(r.config[k])));t.append(tr);}
  box.append(t);
}
function confusion(){
  const box=document.getElementById("confusion");box.replaceChildren();
  for(const r of state.runs){
    if(state.chosen.get(r.run)===false)continue;
    const c=(state.data.get(r.run)||{}).confusion;if(!c||!Array.isArray(c.matrix))continue;
    box.append(el("h4",{},r.run));
    const names=Array.isArray(c.classes)&&c.classes.length===c.matrix.length?c.classes:c.matrix.map((_,i)=>String(i));
    const t=el("table",{"data-confusion":r.run});const h=el("tr");h.append(el("th",{},"true \\ predicted"));
    for(const n of names)h.append(el("th",{},n));t.append(h);
    let max=1;for(const row of c.matrix)for(const v of row)max=Math.max(max,Number(v)||0);
    c.matrix.forEach((row,i)=>{const tr=el("tr");tr.append(el("th",{},names[i]));
      for(const v of row){const td=el("td",{},v);td.style.background="rgba(31,119,180,"+((Number(v)||0)/max*0.8).toFixed(3)+")";tr.append(td);}t.append(tr);});
    box.append(t);
  }
}
function render(){drawRuns();charts("steps","steps","step",["epoch","batch"]);charts("epochs","metrics","epoch",[]);params();confusion();}
async function poll(){
  try{
    state.runs=await get("/api/runs");
    for(const r of state.runs)if(!state.seen.has(r.run)){state.seen.add(r.run);state.chosen.set(r.run,true);}
    await Promise.all(state.runs.filter(r=>state.chosen.get(r.run)!==false).map(async r=>{
      const q="?run="+encodeURIComponent(r.run);
      const [steps,metrics,conf]=await Promise.all([get("/api/steps"+q),get("/api/metrics"+q),get("/api/confusion"+q)]);
      state.data.set(r.run,{steps,metrics,confusion:conf.confusion});
    }));
    render();
    document.getElementById("status").textContent=state.runs.length+" runs, updated "+new Date().toLocaleTimeString();
  }catch(e){document.getElementById("status").textContent="error: "+e.message;}
  setTimeout(poll,2000);
}
poll();
</script></body></html>
)EMBERPAGE";
}

}  // namespace ember::serve
